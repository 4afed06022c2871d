import Foundation
import SoakRecords
import SoakVerdicts
import Testing

/// Reconciliation against a ledger read after the run (`--ledger FILE`), which the backend may
/// not have finished writing: calls past the ledger's end are not covered, never lost.
@Suite struct LedgerCoverageTests {
    static let runStart = 1_000.0

    /// `count` successful calls of `endpoint`, call `i` started at run second `i`, 50 ms long.
    static func writes(
        _ count: Int, _ endpoint: ContractEndpoint = .events, device: String = "d1"
    ) -> (attempts: [AttemptRecord], calls: [CallRecord]) {
        var attempts: [AttemptRecord] = []
        var calls: [CallRecord] = []
        for index in 1...count {
            let start = Double(index)
            let corr = endpoint == .events ? "run:\(device):\(index)" : nil
            attempts.append(
                AttemptRecord(
                    device: device, launch: 1, callId: UInt64(index), endpoint: endpoint, attempt: 1,
                    intendedStart: start, actualStart: start, end: start + 0.05, status: 200, errorKind: nil,
                    retryAfterSeconds: nil, requestBytes: 100, responseBytes: 20, correlationId: corr))
            calls.append(
                CallRecord(
                    device: device, launch: 1, callId: UInt64(index), endpoint: endpoint, attempts: 1,
                    intendedStart: start, start: start, end: start + 0.05, outcome: .ok, finalStatus: 200,
                    correlationId: corr, deviceId: endpoint == .events ? nil : "uuid-\(device)"))
        }
        return (attempts, calls)
    }

    /// The server's row of call `index`: it arrived 10 ms into the call.
    static func row(_ index: Int, _ endpoint: ContractEndpoint = .events, device: String = "d1") -> LedgerRow {
        LedgerRow(
            sequence: index, arrivedAt: runStart + Double(index) + 0.01, endpoint: endpoint.rawValue,
            deviceId: "uuid-\(device)", apiKeySuffix: "abcdef",
            eventName: endpoint == .events ? "e" : nil,
            properties: endpoint == .events ? ["opl_corr": "run:\(device):\(index)"] : nil)
    }

    static func reconcile(
        _ records: (attempts: [AttemptRecord], calls: [CallRecord]), ledger: [LedgerRow], mayLag: Bool = true
    ) -> ReconciliationVerdict {
        var context = VerdictContext(ledger: ledger, runStartEpoch: runStart)
        context.ledgerMayLag = mayLag
        return Verdicts.run(
            ReconciliationVerdict.self, attempts: records.attempts, calls: records.calls, context: context)
    }

    @Test("a ledger that caught up, its rows in reverse order: every call delivered once, complete")
    func caughtUpOutOfOrder() throws {
        let verdict = Self.reconcile(Self.writes(20), ledger: (1...20).reversed().map { Self.row($0) })
        let events = try #require(verdict.endpoints["events"])
        #expect(events.deliveredOnce == 20 && events.lost == 0 && events.notCovered == 0)
        #expect(verdict.incomplete == nil)
        #expect(!verdict.summaryLines().joined().contains("INCOMPLETE"))
    }

    @Test("a ledger that stops short: the calls past its end are not covered, a gap before it is lost")
    func stopsShort() throws {
        // Rows of calls 1…14 but 5: the ledger reaches run second 14.01; the run wrote until 20.
        let ledger = (1...14).filter { $0 != 5 }.map { Self.row($0) }
        let verdict = Self.reconcile(Self.writes(20), ledger: ledger)
        let events = try #require(verdict.endpoints["events"])
        #expect(events.deliveredOnce == 13)
        #expect(events.lost == 1, "call 5 ended before the ledger's last row: its row is missing, not late")
        #expect(events.notCovered == 6)
        #expect(events.calls == 20)
        let incomplete = try #require(verdict.incomplete)
        #expect(abs((incomplete.ledgerReachesSeconds ?? 0) - 14.01) < 1e-6)
        #expect(incomplete.lastWriteSeconds == 20)
        #expect(incomplete.notCovered == 6)

        var metrics: [String: Double] = [:]
        verdict.addMetrics(to: &metrics)
        #expect(metrics["reconcile.not_covered"] == 6 && metrics["events.not_covered"] == 6)
        #expect(metrics["reconcile.lost"] == 1)
        // `reconcile.lost == 0` cannot be judged on an incomplete ledger: not exercised, so it fails
        // with the reason instead of passing or blaming the server.
        let results = Thresholds.evaluate(
            [ThresholdSpec("reconcile.lost <= 1"), ThresholdSpec("reconcile.duplicated == 0")], metrics: metrics,
            notExercised: verdict.notExercised)
        #expect(results[0].passed == false)
        #expect(results[0].notExercised?.contains("the ledger is incomplete") == true)
        #expect(results[1].passed == true)
        let text = verdict.summaryLines().joined(separator: "\n")
        #expect(text.contains("reconciliation INCOMPLETE"))
        #expect(text.contains("6 not covered"))
        #expect(text.contains("reaches run second 14.01"))
        #expect(text.contains("started at run second 20.00"))
    }

    @Test("the same short ledger from the live emulator (it cannot lag): the calls past its end are lost")
    func liveLedgerIsComplete() throws {
        let verdict = Self.reconcile(Self.writes(20), ledger: (1...14).map { Self.row($0) }, mayLag: false)
        let events = try #require(verdict.endpoints["events"])
        #expect(events.lost == 6 && events.notCovered == 0)
        #expect(verdict.incomplete == nil)
    }

    @Test("non-event writes past a short ledger's end are not covered; an empty ledger covers nothing")
    func sessionsAndEmptyLedger() throws {
        let verdict = Self.reconcile(Self.writes(6, .session), ledger: (1...3).map { Self.row($0, .session) })
        let session = try #require(verdict.endpoints["session"])
        #expect(session.deliveredOnce == 3 && session.notCovered == 3 && session.lost == 0)

        let empty = Self.reconcile(Self.writes(4), ledger: [])
        #expect(empty.endpoints["events"]?.notCovered == 4)
        #expect(empty.incomplete?.ledgerReachesSeconds == nil)
        #expect(empty.summaryLines().joined().contains("holds no row"))
    }

    @Test("a server clock 50 ms behind still counts as caught up")
    func smallSkewIsCaughtUp() throws {
        let ledger = (1...20).map { index -> LedgerRow in
            var row = Self.row(index)
            row.arrivedAt -= 0.06
            return row
        }
        let verdict = Self.reconcile(Self.writes(20), ledger: ledger)
        #expect(verdict.incomplete == nil)
        #expect(verdict.endpoints["events"]?.deliveredOnce == 20)
    }

    @Test("a summary.json written before not_covered existed still decodes")
    func decodesOlderCounts() throws {
        let json = #"""
            {"calls": 2, "deliveredOnce": 1, "duplicated": 0, "duplicateWrites": 0, "lost": 1,
             "landedUnknown": 0, "notDelivered": 0, "unexpected": 0, "joinedBy": "correlation_id"}
            """#
        let counts = try JSONDecoder().decode(ReconciliationVerdict.EndpointCounts.self, from: Data(json.utf8))
        #expect(counts.calls == 2 && counts.lost == 1 && counts.notCovered == 0 && counts.joinedBy == "correlation_id")
        let back = try JSONDecoder().decode(
            ReconciliationVerdict.EndpointCounts.self, from: JSONEncoder().encode(counts))
        #expect(back == counts)
    }
}
