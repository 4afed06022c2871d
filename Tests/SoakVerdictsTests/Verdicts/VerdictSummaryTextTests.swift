import Foundation
import Testing

import SoakRecords
import SoakVerdicts
import SoakTestSupport

@Suite struct VerdictSummaryTextTests {
    @Test func linesNameCountsAndOffenders() throws {
        // The 429's N = 10 agrees with the oracle's 10 s window (a shorter N on the run's first
        // hit would say the server's window opened before the run: use before it, not a finding).
        let attempts =
            Fixture.call(.events, call: 1, [.init(status: 429, retryAfter: 10, gapAfter: 0.05), .init(status: 200)])
            + Fixture.call(.events, call: 2, start: 3, [.init(status: 500, gapAfter: 0.5), .init(status: 200)])
        let calls = [Fixture.callRecord(.events, call: 1, attempts: 2, corr: "r:d000001:1")]
        let ledger = [
            Fixture.ledger("events", deviceId: "u", corr: "r:d000001:1"),
            Fixture.ledger("events", deviceId: "u", corr: "r:d000001:1"),
        ]
        let configuration = VerdictsConfiguration(limits: ["events": try DeclaredLimit(parsing: "1/10s per key")])
        let records = [
            AttributionRecord(
                device: "d1", clickedLinkId: "a", emittedLinkId: "a", matchMethod: "CLIPBOARD", sharedNAT: false)
        ]
        let lines = Verdicts.evaluate(
            VerdictInputs(
                attempts: attempts, calls: calls, ledger: ledger, attribution: records, configuration: configuration)
        ).summaryLines()
        #expect(lines.count == 7)
        #expect(lines[0].hasPrefix("back-off: 1 retries judged — 1 early"))
        #expect(lines[0].contains("worst early: d000001 call 1 events waited 50.0 ms of 10.00 s"))
        #expect(lines[1] == "retry matrix: 2 calls, 1 violations (retried_5xx_telemetry 1)")
        #expect(lines[2] == "reconciliation (against the server ledger):")
        #expect(lines[3].hasPrefix("  events: 0 delivered once, 1 duplicated"))
        #expect(lines[4] == "limits (fixed_window):")
        #expect(lines[5].hasPrefix("  events 1/10s per key — "))
        #expect(lines[5].contains("too lenient") && lines[5].contains("judged,") && lines[5].contains("ambiguous)"))
        #expect(lines[6].contains("1 correct") && lines[6].contains("CLIPBOARD 1/1"))
    }

    @Test func withoutLedgerOrLimitsTheLinesSaySo() {
        let lines = Verdicts.evaluate(VerdictInputs(attempts: [], calls: [], ledger: nil)).summaryLines()
        #expect(lines.count == 3)
        #expect(lines[2].contains("not available"))
    }
}

@Suite struct SummaryReadabilityTests {
    @Test(
        "threshold lines show the observed value in the expression's unit",
        arguments: [
            ("match.call_latency.p95 < 250ms", 0.0032, "PASS match.call_latency.p95 < 250ms (observed 3.2ms)"),
            ("match.call_latency.p95 < 1.5s", 0.0032, "PASS match.call_latency.p95 < 1.5s (observed 0.0032s)"),
            ("http.errors.rate < 1%", 0.0025, "PASS http.errors.rate < 1% (observed 0.25%)"),
            ("backoff.early == 0", 0, "PASS backoff.early == 0 (observed 0)"),
        ])
    func thresholdUnits(expression: String, observed: Double, line: String) {
        let result = Thresholds.evaluate([expression], metrics: [String(expression.split(separator: " ")[0]): observed])
        #expect(result.first?.line == line)
    }

    @Test("notes explain unretried 429s and events refused after a rate-limited session")
    func notes() {
        let attempts =
            Fixture.call(.session, device: "d1", call: 1, [.init(status: 429, retryAfter: 3)])
            + Fixture.call(.events, device: "d1", call: 2, [.init(status: 404)])
            + Fixture.call(.events, device: "d2", call: 3, [.init(status: 404)])
        func ended(_ endpoint: ContractEndpoint, _ device: String, _ call: UInt64, _ status: Int) -> CallRecord {
            var record = Fixture.callRecord(endpoint, device: device, call: call, outcome: .apiError)
            record.finalStatus = status
            return record
        }
        let calls = [ended(.session, "d1", 1, 429), ended(.match, "d3", 4, 429), ended(.events, "d1", 2, 404)]
        let notes = SummaryNotes.build(attempts: attempts, calls: calls)
        #expect(notes.count == 2)
        #expect(
            notes[0]
                == "2 429s ended their call without a retry: 1 session (never retried); 1 match (retry budget spent, or the run ended)"
        )
        #expect(
            notes[1].hasPrefix(
                "1 of 2 devices whose events got 404 (unknown deviceId) had their session check-in rate limited (429)"))
        #expect(SummaryNotes.build(attempts: [], calls: []).isEmpty)
    }
}

@Suite struct VerdictReportCodingTests {
    @Test func reportRoundTripsThroughJSON() throws {
        let attempts =
            Fixture.call(.events, call: 1, [.init(status: 429, retryAfter: 10, gapAfter: 0.05), .init(status: 200)])
            + Fixture.call(.match, call: 2, start: 3, [.init(status: 503, gapAfter: 0.5), .init(status: 201)])
        let configuration = VerdictsConfiguration(limits: ["events": try DeclaredLimit(parsing: "1/10s per key")])
        let report = Verdicts.evaluate(
            VerdictInputs(
                attempts: attempts, calls: [Fixture.callRecord(.events, corr: "r:d1:1")],
                ledger: [Fixture.ledger("events", deviceId: "u", corr: "r:d1:1")],
                attribution: [
                    AttributionRecord(
                        device: "d1", clickedLinkId: "a", emittedLinkId: nil, matchMethod: nil, sharedNAT: true)
                ],
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
