import Foundation
import OptoLinkTestSupport
import SoakRecords
import SoakReports
import SoakSupport
import SoakTestSupport
import SoakVerdicts
import Synchronization
import Testing

@testable import OptoLinkSoak

/// A ledger file a backend writes behind its responses, in virtual time: each row goes to the
/// file when the test's clock passes its write time, in the order the schedule gives.
final class LaggingLedger: Sendable {
    /// The run's second 0, seconds since 1970.
    static let runStart = 1_700_000_000.0

    let file: URL
    /// (write time in run seconds, row), in the order the backend writes them.
    private let schedule: [(at: Double, row: LedgerRow)]
    private let state = Mutex((now: 0.0, written: 0))

    init(_ schedule: [(at: Double, row: LedgerRow)]) throws {
        file = FileManager.default.temporaryDirectory.appendingPathComponent("lagging-\(UUID().uuidString).jsonl")
        try Data().write(to: file)
        self.schedule = schedule
    }

    deinit { try? FileManager.default.removeItem(at: file) }

    /// Virtual run seconds now.
    var now: Double { state.withLock { $0.now } }

    /// Moves time to `time` and appends every row due by then that the schedule lists next.
    func advance(to time: Double) {
        let due: [LedgerRow] = state.withLock { s in
            s.now = max(s.now, time)
            var rows: [LedgerRow] = []
            while s.written < schedule.count, schedule[s.written].at <= s.now {
                rows.append(schedule[s.written].row)
                s.written += 1
            }
            return rows
        }
        guard !due.isEmpty, let handle = try? FileHandle(forWritingTo: file) else { return }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        let encoder = JSONEncoder()
        for row in due { try? handle.write(contentsOf: encoder.encode(row) + Data([0x0A])) }
    }

    /// The blocking wait's clock: sleeping moves virtual time and lets the backend write.
    var blockingClock: BlockingWaitClock {
        BlockingWaitClock(now: { [self] in now }, sleep: { [self] in advance(to: now + $0) })
    }

    /// Event call `index` of a run that starts one every 0.25 s: it starts at 0.25 × index, lasts
    /// 50 ms, and the server stores it 10 ms in.
    static func call(_ index: Int) -> (attempt: AttemptRecord, call: CallRecord, row: LedgerRow) {
        let start = 0.25 * Double(index)
        let corr = "run:d\(index % 4):\(index)"
        let attempt = AttemptRecord(
            device: "d\(index % 4)", launch: 1, callId: UInt64(index), endpoint: .events, attempt: 1,
            intendedStart: start, actualStart: start, end: start + 0.05, status: 200, errorKind: nil,
            retryAfterSeconds: nil, requestBytes: 100, responseBytes: 20, correlationId: corr)
        let call = CallRecord(
            device: "d\(index % 4)", launch: 1, callId: UInt64(index), endpoint: .events, attempts: 1,
            intendedStart: start, start: start, end: start + 0.05, outcome: .ok, finalStatus: 200, correlationId: corr)
        let row = LedgerRow(
            sequence: index, arrivedAt: runStart + start + 0.01, endpoint: "events", deviceId: "uuid-\(index % 4)",
            apiKeySuffix: "abcdef", eventName: "e", properties: ["opl_corr": corr])
        return (attempt, call, row)
    }

    /// Rows of calls 1…`count`, each written `lag(index)` seconds after its response, never
    /// before the row written before it (a shipper that keeps the order).
    static func inOrder(_ count: Int, lag: (Int) -> Double) -> [(at: Double, row: LedgerRow)] {
        var last = 0.0
        return (1...count).map { index in
            last = max(last, 0.25 * Double(index) + 0.05 + lag(index))
            return (last, call(index).row)
        }
    }

    /// Reconciles calls 1…`count` with what the file holds now, as `run --ledger` does.
    func reconcile(_ count: Int) throws -> ReconciliationVerdict {
        let made = (1...count).map(Self.call)
        var context = VerdictContext(ledger: try RemoteBackend.readLedger(file), runStartEpoch: Self.runStart)
        context.ledgerMayLag = true
        return Verdicts.run(
            ReconciliationVerdict.self, attempts: made.map(\.attempt), calls: made.map(\.call), context: context)
    }
}

@Suite("ledger catch-up")
struct LedgerCatchUpTests {
    /// A lag of 1…3 s per row from a fixed seed.
    static func lags(seed: UInt64) -> (Int) -> Double {
        var random = SplitMix64(seed: seed)
        let table = (0...200).map { _ in 1 + 2 * Double(random.next() >> 11) / Double(1 << 53) }
        return { table[$0 % table.count] }
    }

    @Test("the state machine: caught up once quiet, gives up on a stalled file, stops at the limit")
    func steps() {
        var caughtUp = LedgerCatchUp(limit: 5)
        #expect(caughtUp.step(now: 0, size: 0, reaches: false) == .look(after: 0.1))
        #expect(caughtUp.step(now: 0.5, size: 10, reaches: true) == .look(after: 0.1))
        #expect(caughtUp.step(now: 1.4, size: 10, reaches: true) == .look(after: 0.1))
        #expect(caughtUp.step(now: 1.5, size: 10, reaches: true) == .stop(.caughtUp))

        var stalled = LedgerCatchUp(limit: 5)
        #expect(stalled.step(now: 0, size: 10, reaches: false) == .look(after: 0.1))
        #expect(stalled.step(now: 2.4, size: 10, reaches: false) == .look(after: 0.1))
        #expect(stalled.step(now: 2.5, size: 10, reaches: false) == .stop(.stoppedGrowing))

        var growing = LedgerCatchUp(limit: 5)
        for tenth in 0..<50 {
            #expect(growing.step(now: Double(tenth) / 10, size: UInt64(tenth), reaches: false) != .stop(.limitReached))
        }
        #expect(growing.step(now: 5, size: 99, reaches: false) == .stop(.limitReached))

        var none = LedgerCatchUp(limit: 0)
        #expect(none.step(now: 3, size: 0, reaches: false) == .stop(.limitReached))
    }

    @Test("a file written 1–3 s behind the responses: the wait ends once it caught up, and nothing is lost")
    func laggingFileCatchesUp() throws {
        let ledger = try LaggingLedger(LaggingLedger.inOrder(40, lag: Self.lags(seed: 7)))
        ledger.advance(to: 10.1)  // the run ends 50 ms after its last response
        let early = try ledger.reconcile(40)
        #expect(early.endpoints["events"]?.lost == 0, "read at once: the tail is not covered, not lost")
        #expect((early.incomplete?.notCovered ?? 0) > 0)

        let outcome = LedgerCatchUp.waitBlocking(
            for: ledger.file, through: LaggingLedger.runStart + 10, limit: 5, clock: ledger.blockingClock)
        #expect(outcome.stop == .caughtUp)
        #expect(outcome.waited < 5)
        #expect(outcome.note == nil)
        let verdict = try ledger.reconcile(40)
        let events = try #require(verdict.endpoints["events"])
        #expect(events.deliveredOnce == 40 && events.lost == 0 && events.notCovered == 0)
        #expect(verdict.incomplete == nil)
    }

    @Test("a file that stops short: the wait gives up when it stops growing; incomplete, not lost")
    func stopsShort() throws {
        let ledger = try LaggingLedger(Array(LaggingLedger.inOrder(40, lag: { _ in 1.5 }).prefix(28)))
        ledger.advance(to: 10.1)
        let outcome = LedgerCatchUp.waitBlocking(
            for: ledger.file, through: LaggingLedger.runStart + 10, limit: 8, clock: ledger.blockingClock)
        #expect(outcome.stop == .stoppedGrowing)
        #expect(outcome.waited < 8)
        #expect(outcome.note?.contains("stopped growing before it reached the run's end") == true)
        let verdict = try ledger.reconcile(40)
        let events = try #require(verdict.endpoints["events"])
        #expect(events.deliveredOnce == 28 && events.lost == 0 && events.notCovered == 12)
        let incomplete = try #require(verdict.incomplete)
        #expect(incomplete.notCovered == 12 && incomplete.lastWriteSeconds == 10)
        #expect(abs((incomplete.ledgerReachesSeconds ?? 0) - 7.01) < 1e-6)
    }

    @Test("rows written out of order, in shuffled batches 2 s behind: still caught up and all matched")
    func outOfOrderBatches() throws {
        // Every 0.5 s the backend writes the rows that arrived 2 s or more before, in reverse order.
        var schedule: [(at: Double, row: LedgerRow)] = []
        var pending = Array(1...40)
        var flush = 0.5
        while !pending.isEmpty {
            let due = pending.filter { 0.25 * Double($0) + 2 <= flush }
            pending.removeAll { due.contains($0) }
            schedule += due.reversed().map { (flush, LaggingLedger.call($0).row) }
            flush += 0.5
        }
        let ledger = try LaggingLedger(schedule)
        ledger.advance(to: 10.1)
        let outcome = LedgerCatchUp.waitBlocking(
            for: ledger.file, through: LaggingLedger.runStart + 10, limit: 5, clock: ledger.blockingClock)
        #expect(outcome.stop == .caughtUp)
        let events = try #require(try ledger.reconcile(40).endpoints["events"])
        #expect(events.deliveredOnce == 40 && events.lost == 0 && events.notCovered == 0)
    }

    @Test("a file that keeps growing with other traffic but never reaches the run's end: waits to the limit")
    func limitReached() throws {
        let other = (1...400).map { index in
            (at: 10 + 0.05 * Double(index), row: LaggingLedger.call(index % 10 + 1).row)
        }
        let ledger = try LaggingLedger(other)
        ledger.advance(to: 10.1)
        let outcome = LedgerCatchUp.waitBlocking(
            for: ledger.file, through: LaggingLedger.runStart + 30, limit: 3, clock: ledger.blockingClock)
        #expect(outcome.stop == .limitReached)
        #expect(abs(outcome.waited - 3) < 1e-9)
    }

    @Test("a finished JSON array is read at once")
    func closedArray() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("array-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try JSONEncoder().encode([LaggingLedger.call(1).row]).write(to: file)
        var tail = LedgerFileTail(file)
        tail.look()
        #expect(tail.closedArray && tail.reaches(LaggingLedger.runStart + 100))
    }

    @Test("--ledger-wait: run and merge take it with --ledger, and refuse it without")
    func theFlagParses() throws {
        let run = try SoakCommandLine.parse(
            ["run", "p.json", "--base-url", "http://127.0.0.1:1", "--ledger", "l.jsonl", "--ledger-wait", "2.5"])
        #expect(run.subcommand(RunSubcommand.self)?.options.ledgerWaitSeconds == 2.5)
        let merge = try SoakCommandLine.parse([
            "merge", "s0", "--out", "m", "--ledger", "l.jsonl", "--ledger-wait", "0",
        ])
        #expect(merge.subcommand(MergeSubcommand.self)?.options.ledgerWaitSeconds == 0)
        #expect(throws: SoakUsageError.self) {
            try SoakCommandLine.parse(["run", "p.json", "--base-url", "http://127.0.0.1:1", "--ledger-wait", "2"])
        }
        #expect(throws: SoakUsageError.self) {
            try SoakCommandLine.parse(["merge", "s0", "--out", "m", "--ledger-wait", "2"])
        }
        #expect(throws: (any Error).self) {
            try SoakCommandLine.parse([
                "run", "p.json", "--base-url", "http://x", "--ledger", "l", "--ledger-wait", "-1",
            ])
        }
        #expect(RunSubcommand.usage.contains("--ledger-wait SECONDS"))
        #expect(MergeSubcommand.usage.contains("--ledger-wait SECONDS"))
    }

    @Test("the run's wait sleeps on the run's clock")
    func asyncWaitOnAVirtualClock() async throws {
        let ledger = try LaggingLedger(LaggingLedger.inOrder(40, lag: Self.lags(seed: 11)))
        ledger.advance(to: 10.1)
        let clock = WritingClock(ledger)
        let outcome = await LedgerCatchUp.wait(
            for: ledger.file, through: LaggingLedger.runStart + 10, limit: 5, clock: clock)
        #expect(outcome.stop == .caughtUp)
        #expect(try ledger.reconcile(40).endpoints["events"]?.deliveredOnce == 40)
    }
}

/// A clock whose sleeps return at once, having moved a ``LaggingLedger``'s time to their deadline.
final class WritingClock: Clock, Sendable {
    typealias Instant = VirtualInstant
    let ledger: LaggingLedger
    let start: Double

    init(_ ledger: LaggingLedger) {
        self.ledger = ledger
        start = ledger.now
    }

    var now: VirtualInstant { VirtualInstant(offset: .seconds(ledger.now - start)) }
    var minimumResolution: Duration { .zero }

    func sleep(until deadline: VirtualInstant, tolerance: Duration? = nil) async throws {
        let offset = deadline.offset.components
        ledger.advance(to: start + Double(offset.seconds) + Double(offset.attoseconds) / 1e18)
    }
}

@Suite("merge --ledger with a lagging file")
struct MergeLaggingLedgerTests {
    /// One shard of 40 event calls (``LaggingLedger/call(_:)``), its last write kept in `shard.json`.
    func shard(_ fixture: ShardFixture) throws -> String {
        let made = (1...40).map(LaggingLedger.call)
        let path = try fixture.write(
            "s0", shard: SoakShard(index: 0, count: 1), profile: try ShardFixture.profile(),
            attempts: made.map(\.attempt), calls: made.map(\.call), startEpoch: LaggingLedger.runStart)
        var manifest = try ShardManifest.load(URL(fileURLWithPath: path))
        manifest.lastWriteEpoch = LaggingLedger.runStart + 10
        try AtomicFile.writeJSON(
            manifest, to: URL(fileURLWithPath: path).appendingPathComponent(ShardManifest.fileName))
        return path
    }

    func merge(_ fixture: ShardFixture, _ ledger: LaggingLedger) throws -> ReconciliationVerdict {
        var options = MergeOptions(directories: [try shard(fixture)])
        options.outDirectory = fixture.root.appendingPathComponent("merged").path
        options.ledgerPath = ledger.file.path
        var extras = MergeCommand.Extras()
        extras.ledgerWaitClock = ledger.blockingClock
        let result = MergeCommand.run(options, extras: extras) { _ in }
        return try #require(result.summary?.verdicts?.reconciliation, "\(result.error ?? "")")
    }

    @Test("a file written 1–3 s behind: merge waits for it, and nothing is lost")
    func catchesUp() throws {
        let fixture = try ShardFixture()
        defer { fixture.remove() }
        let ledger = try LaggingLedger(LaggingLedger.inOrder(40, lag: LedgerCatchUpTests.lags(seed: 3)))
        ledger.advance(to: 10.1)
        let verdict = try merge(fixture, ledger)
        #expect(verdict.endpoints["events"]?.deliveredOnce == 40)
        #expect(verdict.endpoints["events"]?.lost == 0)
        #expect(verdict.incomplete == nil)
    }

    @Test("a file that stops short: merge says incomplete, not lost")
    func stopsShort() throws {
        let fixture = try ShardFixture()
        defer { fixture.remove() }
        let ledger = try LaggingLedger(Array(LaggingLedger.inOrder(40, lag: { _ in 2 }).prefix(30)))
        ledger.advance(to: 10.1)
        let verdict = try merge(fixture, ledger)
        let events = try #require(verdict.endpoints["events"])
        #expect(events.deliveredOnce == 30 && events.lost == 0 && events.notCovered == 10)
        #expect(verdict.incomplete?.notCovered == 10)
    }
}
