import Foundation
import Testing

import SoakRecords
import SoakVerdicts

/// The reconciliation pass keeps correlation ids as integer keys (issue 12, memory per call):
/// the keys tell ids apart exactly as their texts do, and the counts are those of the texts,
/// streaming or in memory, for ids the soak tester itself never writes.
@Suite struct CorrelationKeyTests {
    @Test("two ids get the same key exactly when their texts are equal (odd sequences, colons, overflow)")
    func keysAreOneToOne() {
        let texts = [
            "run:d1:7", "run:d1:007", "run:d1:+7", "run:d1:-7", "run:d1:", "run:d1:7 ", "run:d2:7", "run:x:d1:7",
            "run:x:d1:007", "::", ":d1:7", "run::7", "run:d1:99999999999999999999", "run:d1:9223372036854775807",
            "run:dé:1", "other:d1:7", "run:d1:0", "run:d1:00", "run:d1:-0", "run:d1:1e3", "run:d1:\u{663}",
            "run:d1:9223372036854775808",
        ]
        var table = CorrelationKeys()
        let keys = texts.map { table.key($0) }
        // Asked again, in another order: the same keys.
        for (text, key) in zip(texts, keys).reversed() { #expect(table.key(text) == key, "\(text)") }
        for (i, a) in texts.enumerated() {
            for (j, b) in texts.enumerated() where i < j {
                #expect(keys[i] != nil && keys[j] != nil)
                #expect((keys[i] == keys[j]) == (a == b), "\(a) vs \(b)")
            }
        }
        #expect(table.key("nocolon") == nil && table.key("one:colon") == nil)
    }

    static let runStart = 1_000_000.0

    /// `copies` copies, 20 s apart, of a set of event calls with odd correlation ids: a run id
    /// with a colon, sequences `7`, `007`, `+7` and `-7` of one device (four different ids), two
    /// calls sharing one id, an id that is not one, a row of this run no call made and a row of
    /// another run with the same device and sequence.
    static func oddIds(copies: Int) -> (calls: [CallRecord], ledger: [LedgerRow]) {
        var calls: [CallRecord] = []
        var ledger: [LedgerRow] = []
        for copy in 0..<copies {
            let t = Double(copy) * 20
            let d = "d\(copy)"
            func call(_ corr: String, end: Double, ok: Bool = true) {
                calls.append(
                    CallRecord(
                        device: d, launch: 1, callId: UInt64(calls.count + 1), endpoint: .events, attempts: 1,
                        intendedStart: t + end - 0.1, start: t + end - 0.1, end: t + end,
                        outcome: ok ? .ok : .apiError, finalStatus: ok ? 200 : 503, correlationId: corr))
            }
            func row(_ corr: String, at time: Double) {
                ledger.append(
                    LedgerRow(
                        sequence: ledger.count + 1, arrivedAt: runStart + t + time, endpoint: "events",
                        deviceId: "uuid-\(d)", apiKeySuffix: "client", eventName: "purchase",
                        properties: ["opl_corr": corr]))
            }
            call("r:x:\(d):7", end: 1.0)  // delivered once
            row("r:x:\(d):7", at: 0.95)
            call("r:x:\(d):007", end: 2.0)  // duplicated: two rows
            row("r:x:\(d):007", at: 1.95)
            row("r:x:\(d):007", at: 1.96)
            call("r:x:\(d):+7", end: 3.0, ok: false)  // landed unknown
            row("r:x:\(d):+7", at: 2.95)
            call("r:x:\(d)-other:7", end: 4.0)  // lost
            call("nocolon\(copy)", end: 5.0, ok: false)  // not delivered: no row can be its
            call("r:x:\(d):-7", end: 6.0, ok: false)  // not delivered
            call("r:x:\(d):1", end: 7.0)  // these two share an id: the first claims the row,
            row("r:x:\(d):1", at: 6.95)
            call("r:x:\(d):1", end: 8.0)  // the second is lost
            row("r:x:d-none:1", at: 9.0)  // this run's, no call: unexpected
            row("other:\(d):7", at: 9.5)  // another run's: ignored
        }
        return (calls, ledger)
    }

    @Test("odd correlation ids: the counts of their texts, the same streaming (5 s horizon) as in memory")
    func oddIdsStreamingEqualsInMemory() throws {
        let copies = 6
        let (calls, ledger) = Self.oddIds(copies: copies)
        let inMemory = ReconciliationVerdict.evaluate(
            calls: calls, ledger: ledger, deviceIds: [:], runStartEpoch: Self.runStart, edgeToleranceSeconds: 0.01)
        let events = try #require(inMemory.endpoints["events"])
        #expect(events.calls == 8 * copies)
        #expect(events.deliveredOnce == 2 * copies && events.duplicated == copies && events.duplicateWrites == copies)
        #expect(events.landedUnknown == copies && events.lost == 2 * copies && events.notDelivered == 2 * copies)
        #expect(events.unexpected == copies && inMemory.ignoredLedgerEntries == copies)
        // Live: rows and calls in time order, pruned a 5 s horizon behind the stream.
        var stream: [(time: Double, order: Int, record: RunRecord)] = []
        for entry in ledger { stream.append((entry.arrivedAt - Self.runStart, 0, .ledger(entry))) }
        for call in calls { stream.append((call.end, 1, .call(call))) }
        // Other traffic's attempts keep the stream's time moving, as in a run (rows wait on it).
        for tick in 0..<(copies * 20 + 10) * 4 {
            let t = Double(tick) / 4
            let attempt = AttemptRecord(
                device: "other", launch: 1, callId: UInt64(tick), endpoint: .data, attempt: 1, intendedStart: t,
                actualStart: t, end: t, status: 200, errorKind: nil, retryAfterSeconds: nil, requestBytes: 0,
                responseBytes: 0, correlationId: nil)
            stream.append((t, 1, .attempt(attempt)))
        }
        stream.sort { ($0.time, $0.order) < ($1.time, $1.order) }
        var pass = ReconciliationVerdict.makePass(
            VerdictContext(runStartEpoch: Self.runStart, ledgerStreamed: true, ledgerLive: true, horizonSeconds: 5))
        var held = 0
        for item in stream {
            pass.consume(item.record)
            held = max(held, pass.retained)
        }
        #expect(pass.finish() == inMemory)
        // It did prune: never more than about two copies held at once.
        #expect(held < 2 * 14, "held \(held)")
    }
}
