import Foundation
import OptoLinkHTTP
import OptoLinkStaging
import Testing

/// docs/CONTRACT.md §4 "Fault injection": before/after commit, HTML 502, empty 5xx, latency, reset.
@Suite struct FaultInjectionTests {
    func harness(_ endpoint: String, _ rule: StagingFaultRule) throws -> BackendHarness {
        let h = BackendHarness()
        #expect(try h.session("device-0001").status == 200)
        h.backend.setFaults(StagingFaults(seed: 7, endpoints: [endpoint: [rule]]))
        return h
    }

    @Test func errorBeforeCommitWritesNothing() throws {
        let h = try harness("events", StagingFaultRule(kind: .errorBeforeCommit, rate: 1))
        let response = try h.event("device-0001")
        #expect(response.status == 503)
        #expect(try response.json()["error"] as? String == "Service Unavailable")
        #expect(h.backend.ledger().filter { $0.endpoint == "events" }.isEmpty)
        #expect(h.backend.counters().buckets.filter { $0.bucket == .events }.isEmpty)
    }

    @Test func errorAfterCommitWritesOnceAndMarksTheEntry() throws {
        let h = try harness("events", StagingFaultRule(kind: .errorAfterCommit, rate: 1))
        let response = try h.event("device-0001")
        #expect(response.status == 500)
        #expect(try response.message() == "Internal server error")
        let events = h.backend.ledger().filter { $0.endpoint == "events" }
        #expect(events.count == 1)
        #expect(events.first?.faultAfterCommit == "error_after_commit")
    }

    @Test func html502AfterCommitIsTheNginxPage() throws {
        let h = try harness("events", StagingFaultRule(kind: .html502, rate: 1))
        let response = try h.event("device-0001")
        #expect(response.status == 502)
        #expect(response.headers["Content-Type"] == "text/html")
        #expect(response.body.count == 157)
        #expect(response.text.contains("<center><h1>502 Bad Gateway</h1></center>"))
        #expect(h.backend.ledger().filter { $0.endpoint == "events" }.count == 1)
    }

    @Test func html502BeforeCommitWhenAsked() throws {
        let h = try harness("identity", StagingFaultRule(kind: .html502, rate: 1, afterCommit: false))
        #expect(try h.sdk("/sdk/identity", ["deviceId": "device-0001", "externalId": "u"]).status == 502)
        #expect(h.backend.ledger().filter { $0.endpoint == "identity" }.isEmpty)
    }

    @Test func emptyBody5xx() throws {
        let h = try harness("session", StagingFaultRule(kind: .empty5xx, rate: 1, status: 504))
        let response = try h.session("device-0001")
        #expect(response.status == 504)
        #expect(response.body.isEmpty)
        #expect(h.backend.ledger().filter { $0.endpoint == "session" }.count == 2)
    }

    @Test func latencyCommitsAndDelaysTheNormalAnswer() throws {
        let h = try harness("events", StagingFaultRule(kind: .latency, rate: 1, delaySeconds: 12))
        guard
            case .respondAfter(let response, let delay) = h.send(
                "POST", "/sdk/events", headers: ["Authorization": "Bearer \(BackendHarness.clientKey)"],
                body: ["deviceId": "device-0001", "eventName": "slow"])
        else {
            Issue.record("expected a delayed answer")
            return
        }
        #expect(response.status == 200)
        #expect(delay == .seconds(12))
        #expect(h.backend.ledger().last?.faultAfterCommit == "latency")
    }

    @Test func resetBeforeAndAfterCommit() throws {
        let before = try harness("events", StagingFaultRule(kind: .reset, rate: 1))
        #expect(
            before.send(
                "POST", "/sdk/events", headers: ["Authorization": "Bearer \(BackendHarness.clientKey)"],
                body: ["deviceId": "device-0001", "eventName": "x"]) == .reset)
        #expect(before.backend.ledger().count == 1)
        #expect(before.backend.counters().count("events", status: "reset") == 1)

        let after = try harness("events", StagingFaultRule(kind: .reset, rate: 1, afterCommit: true))
        #expect(
            after.send(
                "POST", "/sdk/events", headers: ["Authorization": "Bearer \(BackendHarness.clientKey)"],
                body: ["deviceId": "device-0001", "eventName": "x"]) == .reset)
        #expect(after.backend.ledger().last?.faultAfterCommit == "reset")
    }

    @Test func afterCommitFaultsLeaveRejectionsAlone() throws {
        let h = try harness("events", StagingFaultRule(kind: .html502, rate: 1))
        let rejected = try h.event("device-0001", "")
        #expect(rejected.status == 400)
        #expect(h.backend.counters().faultCount("events", .html502) == 0)
    }

    @Test func matchFaultBeforeCommitKeepsTheClick() throws {
        let h = BackendHarness()
        _ = try h.click()
        h.backend.setFaults(StagingFaults(endpoints: ["match": [StagingFaultRule(kind: .errorBeforeCommit, rate: 1)]]))
        #expect(try h.match(iosMatchBody()).status == 503)
        h.backend.setFaults(.none)
        #expect(try h.match(iosMatchBody()).json()["matchMethod"] as? String == "FINGERPRINT_EXACT")
    }

    @Test func seededRatesReplayAndRoughlyHoldTheRate() throws {
        func run() throws -> [Int] {
            let h = BackendHarness(StagingConfiguration(limits: StagingLimits(enabled: false)))
            h.backend.setFaults(
                StagingFaults(
                    seed: 42,
                    endpoints: [
                        "data": [
                            StagingFaultRule(kind: .errorBeforeCommit, rate: 0.2),
                            StagingFaultRule(kind: .empty5xx, rate: 0.1),
                        ]
                    ]))
            return try (0..<1000).map { _ in try h.respond("GET", "/acme/welcome/data").status }
        }
        let first = try run()
        #expect(first == (try run()))
        let h = BackendHarness(StagingConfiguration(limits: StagingLimits(enabled: false)))
        h.backend.setFaults(
            StagingFaults(
                seed: 42,
                endpoints: [
                    "data": [
                        StagingFaultRule(kind: .errorBeforeCommit, rate: 0.2),
                        StagingFaultRule(kind: .empty5xx, rate: 0.1),
                    ]
                ]))
        let statuses = try (0..<1000).map { _ in try h.respond("GET", "/acme/welcome/data").status }
        let counted = h.backend.counters()
        #expect(statuses == first)
        #expect(
            counted.faultCount("data", .errorBeforeCommit) + counted.faultCount("data", .empty5xx)
                == statuses.filter { $0 != 200 }.count)
        #expect(counted.count("data", status: "200") == statuses.filter { $0 == 200 }.count)
        let errors = first.filter { $0 == 503 }.count
        #expect((230...370).contains(errors))
        #expect(first.filter { $0 == 200 }.count == 1000 - errors)
    }

    @Test func faultProblemsAreReported() {
        let bad = StagingFaults(endpoints: [
            "nowhere": [StagingFaultRule(kind: .reset, rate: 0.5)],
            "events": [
                StagingFaultRule(kind: .html502, rate: 0.7), StagingFaultRule(kind: .reset, rate: 0.7, status: 404),
            ],
        ])
        let problems = bad.problems()
        #expect(problems.contains { $0.contains("unknown endpoint 'nowhere'") })
        #expect(problems.contains { $0.contains("more than 1") })
        #expect(problems.contains { $0.contains("not a 5xx") })
    }
}
