import Foundation
import OptoLink
import OptoLinkStaging
import Testing

@testable import OptoLinkSoak

@Suite struct VerdictSummaryTextTests {
    @Test func linesNameCountsAndOffenders() throws {
        let attempts =
            Fixture.call(.events, call: 1, [.init(status: 429, retryAfter: 2, gapAfter: 0.05), .init(status: 200)])
            + Fixture.call(.events, call: 2, start: 3, [.init(status: 500, gapAfter: 0.5), .init(status: 200)])
        let calls = [Fixture.callRecord(.events, call: 1, attempts: 2, corr: "r:d000001:1")]
        let ledger = [
            Fixture.ledger("events", deviceId: "u", corr: "r:d000001:1"),
            Fixture.ledger("events", deviceId: "u", corr: "r:d000001:1"),
        ]
        let configuration = VerdictsConfiguration(limits: ["events": try DeclaredLimit(parsing: "1/10s per key")])
        let records = [AttributionRecord(device: "d1", clickedLinkId: "a", emittedLinkId: "a", matchMethod: "CLIPBOARD", sharedNAT: false)]
        let lines = Verdicts.evaluate(
            VerdictInputs(attempts: attempts, calls: calls, ledger: ledger, attribution: records, configuration: configuration)
        ).summaryLines()
        #expect(lines.count == 5)
        #expect(lines[0].hasPrefix("back-off: 1 retries judged — 1 early"))
        #expect(lines[0].contains("worst early: d000001 call 1 events waited 50.0 ms of 2.00 s"))
        #expect(lines[1] == "retry matrix: 2 calls, 1 violations (retried_5xx_telemetry 1)")
        #expect(lines[2].contains("events 0 once, 1 duplicated"))
        #expect(lines[3].hasPrefix("limits (fixed_window): events 1/10s per key — "))
        #expect(lines[3].contains("too lenient"))
        #expect(lines[4].contains("1 correct") && lines[4].contains("CLIPBOARD 1/1"))
    }

    @Test func withoutLedgerOrLimitsTheLinesSaySo() {
        let lines = Verdicts.evaluate(VerdictInputs(attempts: [], calls: [], ledger: nil)).summaryLines()
        #expect(lines.count == 3)
        #expect(lines[2].contains("not available"))
    }
}

@Suite struct VerdictReportCodingTests {
    @Test func reportRoundTripsThroughJSON() throws {
        let attempts =
            Fixture.call(.events, call: 1, [.init(status: 429, retryAfter: 2, gapAfter: 0.05), .init(status: 200)])
            + Fixture.call(.match, call: 2, start: 3, [.init(status: 503, gapAfter: 0.5), .init(status: 201)])
        let configuration = VerdictsConfiguration(limits: ["events": try DeclaredLimit(parsing: "1/10s per key")])
        let report = Verdicts.evaluate(
            VerdictInputs(
                attempts: attempts, calls: [Fixture.callRecord(.events, corr: "r:d1:1")],
                ledger: [Fixture.ledger("events", deviceId: "u", corr: "r:d1:1")],
                attribution: [AttributionRecord(device: "d1", clickedLinkId: "a", emittedLinkId: nil, matchMethod: nil, sharedNAT: true)],
                configuration: configuration))
        let data = try JSONEncoder().encode(report)
        let decoded = try JSONDecoder().decode(VerdictsReport.self, from: data)
        #expect(decoded == report)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let limits = try #require(object["limits"] as? [String: Any])
        let buckets = try #require(limits["buckets"] as? [String: Any])
        let events = try #require(buckets["events"] as? [String: Any])
        #expect(events["declared"] as? String == "1/10s per key")
        #expect(events["enforcedExactly"] as? Bool == false)
    }
}
