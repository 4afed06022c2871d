import Foundation
import Testing

@testable import OptoLinkSoak
@testable import SoakReports

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A structural check of JUnit XML, equivalent to the common JUnit XSD's rules for what CI reads:
/// a `testsuites` root; each `testsuite` with `name`, `tests`, `failures`, `errors`, `skipped`
/// and `time` whose counts match its `testcase` children; each `testcase` with `name`,
/// `classname` and a numeric `time`; at most one `failure` (with `message`) or `skipped` per
/// case; nothing else where the schema allows nothing else.
final class JUnitStructure: NSObject, XMLParserDelegate {
    var problems: [String] = []
    var suites = 0
    var cases = 0
    private var stack: [String] = []
    private var suite: (attributes: [String: String], cases: Int, failures: Int, skipped: Int)?
    private var caseOutcomes = 0
    private var rootCounts = (tests: 0, failures: 0, skipped: 0)
    private var rootAttributes: [String: String] = [:]

    static func check(_ xml: String) -> JUnitStructure {
        let checker = JUnitStructure()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = checker
        if !parser.parse() { checker.problems.append("not well-formed: \(parser.parserError.map { "\($0)" } ?? "?")") }
        return checker
    }

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        let parent = stack.last
        stack.append(name)
        let allowed: [String?: Set<String>] = [
            nil: ["testsuites"], "testsuites": ["testsuite"], "testsuite": ["properties", "testcase", "system-out"],
            "properties": ["property"], "testcase": ["failure", "skipped", "error", "system-out", "system-err"],
        ]
        guard allowed[parent]?.contains(name) == true else {
            problems.append("<\(name)> not allowed inside <\(parent ?? "document")>")
            return
        }
        func require(_ keys: [String]) {
            for key in keys where attributes[key] == nil { problems.append("<\(name)> lacks \(key)") }
        }
        switch name {
        case "testsuites": rootAttributes = attributes
        case "testsuite":
            require(["name", "tests", "failures", "errors", "skipped", "time"])
            if attributes["time"].flatMap(Double.init) == nil { problems.append("testsuite time not numeric") }
            suite = (attributes, 0, 0, 0)
            suites += 1
        case "testcase":
            require(["name", "classname", "time"])
            if attributes["time"].flatMap(Double.init) == nil { problems.append("testcase time not numeric") }
            suite?.cases += 1
            cases += 1
            caseOutcomes = 0
        case "failure":
            require(["message"])
            suite?.failures += 1
            caseOutcomes += 1
        case "skipped":
            suite?.skipped += 1
            caseOutcomes += 1
        case "property": require(["name", "value"])
        default: break
        }
        if caseOutcomes > 1 { problems.append("a testcase has more than one failure/skipped") }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        stack.removeLast()
        if name == "testsuite", let suite {
            let a = suite.attributes
            for (key, count) in [("tests", suite.cases), ("failures", suite.failures), ("skipped", suite.skipped)]
            where a[key] != String(count) {
                problems.append("testsuite \(a["name"] ?? "?") \(key)=\(a[key] ?? "nil") but \(count) counted")
            }
            rootCounts.tests += suite.cases
            rootCounts.failures += suite.failures
            rootCounts.skipped += suite.skipped
        }
        if name == "testsuites" {
            for (key, count) in [
                ("tests", rootCounts.tests), ("failures", rootCounts.failures), ("skipped", rootCounts.skipped),
            ] where rootAttributes[key] != nil && rootAttributes[key] != String(count) {
                problems.append("testsuites \(key)=\(rootAttributes[key] ?? "") but \(count) counted")
            }
        }
    }
}

@Suite("JUnit XML")
struct JUnitTests {
    static func sample() -> JUnitReport {
        JUnitReport(
            name: "run <smoke> & \"friends\"",
            suites: [
                .init(
                    name: "thresholds",
                    cases: [
                        .init(
                            name: "a < 1", className: "optolink-soak.thresholds", result: .passed, output: "observed 0"),
                        .init(
                            name: "b > 2", className: "optolink-soak.thresholds",
                            result: .failed(message: "FAIL b > 2 (observed 1)", detail: "it's <1>\u{0001}")),
                    ], properties: [("profile", "smoke")], timestamp: "2026-01-01T00:00:00Z"),
                .init(
                    name: "verdicts",
                    cases: [
                        .init(name: "reconciliation", className: "v", result: .skipped(message: "no ledger")),
                        .init(name: "backoff", className: "v", result: .passed),
                    ]),
            ])
    }

    @Test("a report with passed, failed and skipped cases is structurally valid, counts agree")
    func structure() {
        let xml = Self.sample().xml()
        let check = JUnitStructure.check(xml)
        #expect(check.problems == [])
        #expect(check.suites == 2 && check.cases == 4)
        #expect(xml.contains("tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"1\""))
        #expect(xml.contains("it&apos;s &lt;1&gt;\u{FFFD}"))
        #expect(!Self.sample().passed)
    }

    @Test("the checker rejects what it must: wrong counts, a case without classname, a stray element")
    func checkerCatchesFaults() {
        let good = Self.sample().xml()
        let wrongCount = good.replacingOccurrences(of: "tests=\"2\" failures=\"1\"", with: "tests=\"3\" failures=\"1\"")
        #expect(!JUnitStructure.check(wrongCount).problems.isEmpty)
        let noClass = good.replacingOccurrences(of: "classname=\"v\"", with: "")
        #expect(!JUnitStructure.check(noClass).problems.isEmpty)
        let stray = good.replacingOccurrences(of: "<properties>", with: "<bogus/><properties>")
        #expect(!JUnitStructure.check(stray).problems.isEmpty)
        #expect(!JUnitStructure.check("<testsuites><testsuite").problems.isEmpty)
    }

    @Test("a run's --junit file: one case per threshold and per verdict, failures where they failed")
    func runReport() async throws {
        let e2e = try EndToEndRun(
            profile: e2eProfile(
                devices: 10, rate: 50, steps: #"{"kind": "firstLaunch"}, {"kind": "event", "name": "e"}"#,
                thresholds:
                    #"["http.requests > 0", {"threshold": "backoff.early == 0", "optional": true}, "http.requests > 1000000"]"#
            ))
        let junit = e2e.directory.appendingPathComponent("junit.xml")
        let result = await e2e.makeRun { $0.junitPath = junit.path }.execute()
        #expect(result.exitCode == 1, "\(e2e.log)")
        let summary = try #require(result.summary)
        let xml = try String(contentsOf: junit, encoding: .utf8)
        let report = JUnitReport.run(summary)
        #expect(xml == report.xml())
        let check = JUnitStructure.check(report.xml())
        #expect(check.problems == [])
        #expect(report.suites.map(\.name) == ["thresholds", "verdicts"])
        #expect(report.suites[0].cases.count == 3 && report.suites[0].failures == 1)
        // No retry happened: the optional back-off threshold is not exercised, reported as skipped.
        #expect(report.suites[0].skipped == 1)
        #expect(report.suites[1].cases.map(\.name) == VerdictCheck.checks(summary).map(\.name))
        #expect(report.suites[1].cases.count == VerdictCheck.checks(summary).count)
    }
}
