import SoakReports
import SoakTestSupport
import Testing

/// The JUnit XML a run writes for CI, held to the schema's rules by ``JUnitStructure``.
@Suite("JUnit XML")
struct JUnitReportTests {
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
}
