import Testing

import SoakRecords
import SoakVerdicts
import SoakTestSupport

@Suite struct VerdictReconciliationTests {
    func reconcile(
        _ calls: [CallRecord], _ ledger: [LedgerRow]?, deviceIds: [String: String] = [:], runStart: Double = 0
    ) -> ReconciliationVerdict {
        ReconciliationVerdict.evaluate(
            calls: calls, ledger: ledger, deviceIds: deviceIds, runStartEpoch: runStart, edgeToleranceSeconds: 0.05)
    }

    @Test func eventsJoinOnCorrelationId() throws {
        let calls = [
            Fixture.callRecord(.events, call: 1, corr: "run1:d1:1"),  // once
            Fixture.callRecord(.events, call: 2, corr: "run1:d1:2"),  // duplicated (3 rows)
            Fixture.callRecord(.events, call: 3, corr: "run1:d1:3"),  // lost
            Fixture.callRecord(.events, call: 4, outcome: .connectionError, corr: "run1:d1:4"),  // landed unknown
            Fixture.callRecord(.events, call: 5, outcome: .apiError, corr: "run1:d1:5"),  // not delivered
        ]
        let ledger = [
            Fixture.ledger("events", deviceId: "uuid-1", corr: "run1:d1:1"),
            Fixture.ledger("events", deviceId: "uuid-1", corr: "run1:d1:2"),
            Fixture.ledger("events", deviceId: "uuid-1", corr: "run1:d1:2"),
            Fixture.ledger("events", deviceId: "uuid-1", corr: "run1:d1:2"),
            Fixture.ledger("events", deviceId: "uuid-1", corr: "run1:d1:4"),
            Fixture.ledger("events", deviceId: "uuid-1", corr: "run1:d1:99"),  // unexpected
            Fixture.ledger("events", deviceId: "uuid-x", corr: "otherrun:d1:1"),  // foreign
            Fixture.ledger("events", deviceId: "uuid-y"),  // no correlation id
        ]
        let verdict = reconcile(calls, ledger)
        let events = try #require(verdict.endpoints["events"])
        #expect(verdict.available)
        #expect(events.calls == 5)
        #expect(events.deliveredOnce == 1)
        #expect(events.duplicated == 1)
        #expect(events.duplicateWrites == 2)
        #expect(events.lost == 1)
        #expect(events.landedUnknown == 1)
        #expect(events.notDelivered == 1)
        #expect(events.unexpected == 1)
        #expect(verdict.ignoredLedgerEntries == 2)
    }

    /// A backend whose ledger rows arrive out of order (arrival times descending, rows shuffled):
    /// the same counts as in order, since rows join calls by correlation id, not by position.
    @Test func ledgerRowsOutOfOrderGiveTheSameCounts() throws {
        let calls = (1...6).map { Fixture.callRecord(.events, call: $0, corr: "run1:d1:\($0)") }
        let inOrder = [1, 2, 2, 3, 5, 6].enumerated().map { index, call in
            Fixture.ledger("events", deviceId: "uuid-1", corr: "run1:d1:\(call)", at: 1_000 + Double(index))
        }
        let expected = try #require(reconcile(calls, inOrder).endpoints["events"])
        #expect(expected.deliveredOnce == 4 && expected.duplicated == 1 && expected.lost == 1)
        let scrambled = [inOrder[5], inOrder[2], inOrder[0], inOrder[4], inOrder[1], inOrder[3]]
        let events = try #require(reconcile(calls, scrambled).endpoints["events"])
        #expect(events.deliveredOnce == expected.deliveredOnce)
        #expect(events.duplicated == expected.duplicated)
        #expect(events.lost == expected.lost)
    }

    @Test func noLedgerMeansNotAvailableAndNoMetrics() {
        let report = Verdicts.evaluate(
            VerdictInputs(attempts: [], calls: [Fixture.callRecord(.events, corr: "r:d:1")], ledger: nil))
        #expect(!report.reconciliation.available)
        #expect(report.reconciliation.note?.contains("not available") == true)
        let metrics = report.metrics()
        #expect(metrics["events.duplicated"] == nil)
        let results = Thresholds.evaluate(["events.duplicated == 0"], metrics: metrics)
        #expect(results.first?.passed == false)
        #expect(results.first?.message?.contains("not available") == true)
    }

    @Test func sessionAndIdentityJoinPerDeviceLearntFromEvents() throws {
        // d1's deviceId is learnt from its event; d2's is given by the driver.
        let calls = [
            Fixture.callRecord(.events, device: "d1", call: 1, corr: "run:d1:1"),
            Fixture.callRecord(.session, device: "d1", call: 2),
            Fixture.callRecord(.identity, device: "d1", call: 3),
            Fixture.callRecord(.identity, device: "d2", call: 1, outcome: .connectionError),
            Fixture.callRecord(.identityClear, device: "d2", call: 2),
        ]
        let ledger = [
            Fixture.ledger("events", deviceId: "uuid-1", corr: "run:d1:1"),
            Fixture.ledger("session", deviceId: "uuid-1"),
            Fixture.ledger("identity", deviceId: "uuid-1"),
            Fixture.ledger("identity", deviceId: "uuid-1"),  // duplicated
            Fixture.ledger("identity", deviceId: "uuid-2"),  // landed unknown
            // identity_clear of d2 lost
        ]
        let verdict = reconcile(calls, ledger, deviceIds: ["d2": "uuid-2"])
        let session = try #require(verdict.endpoints["session"])
        let identity = try #require(verdict.endpoints["identity"])
        let clear = try #require(verdict.endpoints["identity_clear"])
        #expect(session.deliveredOnce == 1)
        #expect(session.joinedBy == "device")
        // One outcome per call: d1's one identity call stored twice is duplicated (not also delivered once).
        #expect(identity.calls == 2)
        #expect(identity.deliveredOnce == 0)
        #expect(identity.duplicated == 1)
        #expect(identity.landedUnknown == 1)
        #expect(clear.lost == 1)
    }

    @Test func unmappedDevicesAreComparedAsOneLumpPerEndpoint() throws {
        let calls = (1...4).map { Fixture.callRecord(.session, device: "d\($0)") }
        let ledger = (1...5).map { Fixture.ledger("session", deviceId: "uuid-\($0)") }
        let session = try #require(reconcile(calls, ledger).endpoints["session"])
        #expect(session.joinedBy == "endpoint_total")
        #expect(session.calls == 4)
        #expect(session.deliveredOnce == 3)
        #expect(session.duplicated == 1)
    }

    @Test func ledgerRowsFromBeforeTheRunAreIgnored() throws {
        let calls = [Fixture.callRecord(.session, device: "d1")]
        let ledger = [
            Fixture.ledger("session", deviceId: "u", at: 500), Fixture.ledger("session", deviceId: "u", at: 1_000),
        ]
        let verdict = reconcile(calls, ledger, runStart: 999)
        #expect(verdict.endpoints["session"]?.deliveredOnce == 1)
        #expect(verdict.endpoints["session"]?.duplicated == 0)
        #expect(verdict.ignoredLedgerEntries == 1)
    }

    @Test func metricsPerEndpoint() {
        let calls = [Fixture.callRecord(.events, corr: "r:d1:1"), Fixture.callRecord(.events, call: 2, corr: "r:d1:2")]
        let ledger = [
            Fixture.ledger("events", deviceId: "u", corr: "r:d1:1"),
            Fixture.ledger("events", deviceId: "u", corr: "r:d1:1"),
        ]
        let metrics = Verdicts.evaluate(VerdictInputs(attempts: [], calls: calls, ledger: ledger)).metrics()
        #expect(metrics["events.duplicated"] == 1)
        #expect(metrics["events.lost"] == 1)
        #expect(metrics["events.delivered_once"] == 0)
        #expect(metrics["session.duplicated"] == 0)
        #expect(metrics["reconcile.duplicated"] == 1)
    }

    @Test(arguments: [("run:d000001:7", "run", "d000001", "7"), ("a:b:c:d", "a:b", "c", "d")])
    func correlationIdsSplitFromTheRight(text: String, run: String, device: String, sequence: String) throws {
        let corr = try #require(CorrelationId(text))
        #expect(corr.runId == run)
        #expect(corr.device == device)
        #expect(corr.sequence == sequence)
        #expect(CorrelationId("nocolon") == nil)
    }
}
