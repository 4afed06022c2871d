import Foundation
import Testing

import OptoLinkSoak
import SoakReports
import SoakTestSupport

@Suite("JUnit XML")
struct JUnitTests {
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
