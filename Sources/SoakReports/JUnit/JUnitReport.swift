import Foundation

/// A JUnit XML document (the common `testsuites › testsuite › testcase` shape CI systems read):
/// one test case per threshold, verdict or regression check, so CI shows which check failed.
///
/// Written by `run --junit FILE` and `compare --junit FILE`. Attribute counts (`tests`,
/// `failures`, `errors`, `skipped`) are derived from the cases, so they always agree. Times are
/// seconds. Text is XML-escaped; characters XML 1.0 forbids are replaced by U+FFFD.
package struct JUnitReport: Sendable, Equatable {
    /// One check.
    package struct TestCase: Sendable, Equatable {
        package enum Result: Sendable, Equatable {
            case passed
            /// The check ran and failed: a one-line message and optional detail text.
            case failed(message: String, detail: String?)
            /// The check did not apply or judged nothing (e.g. no server ledger).
            case skipped(message: String)
        }

        package var name: String
        /// Groups cases in CI views: `optolink-soak.thresholds`, `optolink-soak.verdicts`, ….
        package var className: String
        package var result: Result
        /// Free text shown with the case (observed values).
        package var output: String?
        package var timeSeconds: Double

        package init(name: String, className: String, result: Result, output: String? = nil, timeSeconds: Double = 0) {
            self.name = name
            self.className = className
            self.result = result
            self.output = output
            self.timeSeconds = timeSeconds
        }
    }

    /// One `testsuite`.
    package struct Suite: Sendable, Equatable {
        package var name: String
        package var cases: [TestCase]
        /// Suite-level properties (`profile`, `runId`, …), written as `<properties>`.
        package var properties: [(String, String)]
        package var timestamp: String?

        package init(name: String, cases: [TestCase], properties: [(String, String)] = [], timestamp: String? = nil) {
            self.name = name
            self.cases = cases
            self.properties = properties
            self.timestamp = timestamp
        }

        package static func == (lhs: Suite, rhs: Suite) -> Bool {
            lhs.name == rhs.name && lhs.cases == rhs.cases && lhs.timestamp == rhs.timestamp
                && lhs.properties.map { [$0.0, $0.1] } == rhs.properties.map { [$0.0, $0.1] }
        }

        package var failures: Int { cases.filter { if case .failed = $0.result { true } else { false } }.count }
        package var skipped: Int { cases.filter { if case .skipped = $0.result { true } else { false } }.count }
        var time: Double { cases.reduce(0) { $0 + $1.timeSeconds } }
    }

    /// The document's name (`optolink-soak run smoke`).
    package var name: String
    package var suites: [Suite]

    package init(name: String, suites: [Suite]) {
        self.name = name
        self.suites = suites
    }

    /// True when no case failed.
    package var passed: Bool { suites.allSatisfy { $0.failures == 0 } }

    /// The XML text (UTF-8, with declaration).
    package func xml() -> String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        let tests = suites.reduce(0) { $0 + $1.cases.count }
        let failures = suites.reduce(0) { $0 + $1.failures }
        let skipped = suites.reduce(0) { $0 + $1.skipped }
        let time = suites.reduce(0) { $0 + $1.time }
        out += "<testsuites name=\"\(Self.escape(name))\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"0\""
        out += " skipped=\"\(skipped)\" time=\"\(Self.seconds(time))\">\n"
        for (index, suite) in suites.enumerated() {
            out += "  <testsuite name=\"\(Self.escape(suite.name))\" id=\"\(index)\" tests=\"\(suite.cases.count)\""
            out += " failures=\"\(suite.failures)\" errors=\"0\" skipped=\"\(suite.skipped)\""
            out += " time=\"\(Self.seconds(suite.time))\""
            if let timestamp = suite.timestamp { out += " timestamp=\"\(Self.escape(timestamp))\"" }
            out += ">\n"
            if !suite.properties.isEmpty {
                out += "    <properties>\n"
                for (key, value) in suite.properties {
                    out += "      <property name=\"\(Self.escape(key))\" value=\"\(Self.escape(value))\"/>\n"
                }
                out += "    </properties>\n"
            }
            for test in suite.cases {
                out += "    <testcase name=\"\(Self.escape(test.name))\" classname=\"\(Self.escape(test.className))\""
                out += " time=\"\(Self.seconds(test.timeSeconds))\""
                var body = ""
                switch test.result {
                case .passed: break
                case .failed(let message, let detail):
                    body += "      <failure message=\"\(Self.escape(message))\" type=\"failure\">"
                    body += Self.escape(detail ?? message) + "</failure>\n"
                case .skipped(let message):
                    body += "      <skipped message=\"\(Self.escape(message))\"/>\n"
                }
                if let output = test.output { body += "      <system-out>\(Self.escape(output))</system-out>\n" }
                out += body.isEmpty ? "/>\n" : ">\n\(body)    </testcase>\n"
            }
            out += "  </testsuite>\n"
        }
        out += "</testsuites>\n"
        return out
    }

    /// Writes ``xml()`` to `url` atomically.
    /// - Throws: the file system's error when the file cannot be written.
    package func write(to url: URL) throws {
        try AtomicFile.write(Data(xml().utf8), to: url)
    }

    package static func seconds(_ value: Double) -> String {
        String(format: "%.3f", value.isFinite ? max(0, value) : 0)
    }

    package static func escape(_ text: String) -> String { MarkupEscaping.escape(text) }
}
