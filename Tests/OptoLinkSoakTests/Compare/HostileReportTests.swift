import Foundation
import OptoLink
import Testing

import OptoLinkSoak
import SoakVerdicts
import SoakReports

/// Report directories edited by hand or damaged, read back by `compare` and `run --baseline`: a
/// clear error or a report without the charts, never a trap, a silent pass or a lost baseline.
@Suite("reports read back: hostile inputs", .serialized, .timeLimit(.minutes(2)))
struct HostileReportTests {
    /// One small real run: its report directory (moved to `baseline`) and the end-to-end harness.
    private func baselineRun(regression: String? = nil) async throws -> (EndToEndRun, URL) {
        var json = e2eProfile(devices: 10, rate: 40, steps: #"{"kind": "firstLaunch"}"#)
        if let regression {
            json = json.replacingOccurrences(
                of: #""expect": {"thresholds": []}"#,
                with: #""expect": {"thresholds": [], "regression": [\#(regression)]}"#)
        }
        let e2e = try EndToEndRun(profile: json)
        #expect(await e2e.makeRun().execute().exitCode == 0, "\(e2e.log)")
        let baseline = e2e.directory.appendingPathComponent("baseline")
        try FileManager.default.moveItem(at: e2e.reportDirectory, to: baseline)
        return (e2e, baseline)
    }

    private func compare(_ baseline: URL, _ current: URL) -> (Int32, MessageLog) {
        let log = MessageLog()
        let result = CompareCommand.run(
            CompareOptions(baselinePath: baseline.path, currentPath: current.path), log: log.append)
        return (result.exitCode, log)
    }

    /// Times a damaged CSV can hold (`nan`, `inf`, 1e300) in one row: the comparison and its
    /// charts are written (the row is left out of the charts); it trapped in the HTML step.
    @Test(arguments: ["nan", "inf", "-inf", "1e300", "-1e300"])
    func aNonFiniteTimeInAttemptsCSV(_ time: String) async throws {
        let (e2e, baseline) = try await baselineRun()
        let current = e2e.directory.appendingPathComponent("current")
        try FileManager.default.copyItem(at: baseline, to: current)
        let csv = current.appendingPathComponent("attempts.csv")
        var lines = try String(contentsOf: csv, encoding: .utf8).split(separator: "\n").map(String.init)
        var fields = lines[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        fields[6] = time  // actual_start
        fields[7] = time  // end
        lines[1] = fields.joined(separator: ",")
        try (lines.joined(separator: "\n") + "\n").write(to: csv, atomically: true, encoding: .utf8)
        let (code, log) = compare(baseline, current)
        #expect(code == 0, "\(log.lines)")
        #expect(FileManager.default.fileExists(atPath: current.appendingPathComponent("compare/report.html").path))
    }

    /// A current report whose profile.json no longer decodes: an error naming the file, not the
    /// default rule in place of its failing `expect.regression` (which let the regression pass).
    @Test func aProfileThatDoesNotDecodeIsAnError() async throws {
        let (e2e, baseline) = try await baselineRun(regression: #""match.attempts > baseline""#)
        let current = e2e.directory.appendingPathComponent("current")
        try FileManager.default.copyItem(at: baseline, to: current)
        #expect(compare(baseline, current).0 == 1, "the profile's failing rule is applied")
        let profile = current.appendingPathComponent("profile.json")
        let text = try String(contentsOf: profile, encoding: .utf8)
        try text.replacingOccurrences(of: #""name""#, with: #""fromANewerVersion": 1, "name""#, options: [], range: nil)
            .write(to: profile, atomically: true, encoding: .utf8)
        let (code, log) = compare(baseline, current)
        #expect(code == 2)
        #expect(log.lines.contains { $0.contains("profile.json") && $0.contains("fromANewerVersion") }, "\(log.lines)")
    }

    /// `run --out X --force --baseline X` overwrote the baseline and compared the run with itself
    /// (exit 0); `compare X X` too. Both are refused.
    @Test func theBaselineCannotBeTheOutDirectory() async throws {
        let (e2e, baseline) = try await baselineRun()
        let result = await e2e.makeRun {
            $0.outDirectory = baseline.path + "/"
            $0.force = true
            $0.baselineDirectory = baseline.path
        }.execute()
        #expect(result.exitCode == 2 && result.summary == nil)
        #expect(result.error?.contains("is the --out directory") == true, "\(String(describing: result.error))")
        #expect(compare(baseline, baseline.appendingPathComponent(".")).0 == 2)
    }

    /// Counts near Int.max in a hand-edited summary.json: compared, not trapped on.
    @Test func hugeCountsInASummary() async throws {
        let (e2e, baseline) = try await baselineRun()
        let current = e2e.directory.appendingPathComponent("current")
        try FileManager.default.copyItem(at: baseline, to: current)
        let file = current.appendingPathComponent("summary.json")
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        var endpoints = try #require(json["endpoints"] as? [String: Any])
        var match = try #require(endpoints["match"] as? [String: Any])
        match["attempts"] = Int.max
        match["byStatus"] = ["500": Int.max, "503": Int.max]
        endpoints["match"] = match
        json["endpoints"] = endpoints
        try JSONSerialization.data(withJSONObject: json).write(to: file)
        let (code, log) = compare(baseline, current)
        #expect(code == 0 || code == 1, "\(log.lines)")
    }

    /// A right-hand side long enough to overflow the parser's stack is refused by length.
    @Test func aVeryLongRegressionRuleIsRefused() {
        let deep = String(repeating: "(", count: 100_000) + "1" + String(repeating: ")", count: 100_000)
        #expect(throws: RegressionRuleError.self) { try RegressionRule("http.requests <= \(deep)") }
        #expect(throws: RegressionRuleError.self) {
            try RegressionRule("http.requests <= " + String(repeating: "-", count: 1_000_000) + "1")
        }
        #expect(throws: Never.self) { try RegressionRule("http.requests <= baseline * 1.2 + 5") }
    }

    /// A journey name with terminal escapes (ESC [2J clears the screen, CR rewrites the line) is
    /// printed inert in the summary text: every control character but newline and tab is shown as
    /// U+FFFD.
    @Test func controlCharactersInNamesArePrintedInert() async throws {
        #expect(
            SummaryText.printable("a\u{1B}[31mb\rc\u{7}d\u{9B}e\u{7F}f\tg\nh")
                == "a\u{FFFD}[31mb\u{FFFD}c\u{FFFD}d\u{FFFD}e\u{FFFD}f\tg\nh")
        let json = e2eProfile(devices: 4, rate: 40, steps: #"{"kind": "firstLaunch"}"#)
            .replacingOccurrences(of: #"[{"name": "j","#, with: #"[{"name": "j\u001b[2J\r","#)
        let e2e = try EndToEndRun(profile: json)
        #expect(await e2e.makeRun().execute().exitCode == 0, "\(e2e.log)")
        let text = try String(contentsOf: e2e.reportDirectory.appendingPathComponent("summary.txt"), encoding: .utf8)
        #expect(text.contains("journey j\u{FFFD}[2J\u{FFFD} from intended start"), "\(text)")
        #expect(!text.unicodeScalars.contains { $0.value == 0x1B || $0 == "\r" })
    }
}
