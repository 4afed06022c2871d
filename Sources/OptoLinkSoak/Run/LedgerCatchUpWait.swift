import Foundation

/// How a wait for a ledger file ended, for the report's notes.
struct LedgerCatchUpOutcome: Equatable {
    var stop: LedgerCatchUp.Stop
    /// Seconds waited.
    var waited: Double
    /// The latest arrival the file held (seconds since the Unix epoch), if it is JSON lines.
    var latestArrival: Double?
    /// The run's last successful write (seconds since the Unix epoch), if it made one.
    var target: Double?

    /// A note for the report when the file did not catch up; `nil` when it did.
    var note: String? {
        guard stop != .caughtUp else { return nil }
        let reach = latestArrival.map { String(format: "its latest row arrived at %.2f", $0) } ?? "it holds no row yet"
        let goal = target.map { String(format: ", the run's last successful write started at %.2f", $0) } ?? ""
        return String(format: "--ledger: waited %.1f s and the file ", waited)
            + "\(stop.rawValue) before it reached the run's end (\(reach)\(goal), seconds since 1970); "
            + "reconciliation is incomplete, not lost, for the calls it does not reach"
    }
}

/// One wait on one file: the file's tail and the state machine, stepped by a driver that owns the clock.
struct LedgerCatchUpWatch {
    private var catchUp: LedgerCatchUp
    private var tail: LedgerFileTail
    private let target: Double?
    private let start: Double

    init(_ file: URL, through target: Double?, limit: Double, now: Double) {
        catchUp = LedgerCatchUp(limit: limit)
        tail = LedgerFileTail(file)
        self.target = target
        start = now
    }

    /// Looks at the file and says what to do next.
    mutating func next(now: Double) -> LedgerCatchUp.Step {
        tail.look()
        return catchUp.step(now: now, size: tail.size, reaches: tail.reaches(target))
    }

    func outcome(_ stop: LedgerCatchUp.Stop, now: Double) -> LedgerCatchUpOutcome {
        LedgerCatchUpOutcome(stop: stop, waited: now - start, latestArrival: tail.latestArrival, target: target)
    }
}

extension LedgerCatchUp {
    /// Waits on `clock` until `file` reaches `target` (seconds since the Unix epoch; `nil`: the
    /// run made no successful write), stops growing, or `limit` seconds pass. A cancelled wait
    /// ends as ``Stop/limitReached``.
    static func wait(
        for file: URL, through target: Double?, limit: Double, clock: any Clock<Duration>
    ) async -> LedgerCatchUpOutcome {
        await wait(file, target, limit, on: clock)
    }

    private static func wait<C: Clock>(
        _ file: URL, _ target: Double?, _ limit: Double, on clock: C
    ) async -> LedgerCatchUpOutcome where C.Duration == Duration {
        let origin = clock.now
        func now() -> Double {
            let elapsed = origin.duration(to: clock.now).components
            return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        }
        var watch = LedgerCatchUpWatch(file, through: target, limit: limit, now: now())
        while true {
            switch watch.next(now: now()) {
            case .look(let seconds):
                do {
                    try await clock.sleep(until: clock.now.advanced(by: .seconds(seconds)), tolerance: nil)
                } catch {
                    return watch.outcome(.limitReached, now: now())
                }
            case .stop(let stop): return watch.outcome(stop, now: now())
            }
        }
    }

    /// The same wait, blocking the calling thread (`merge`, which is synchronous).
    static func waitBlocking(
        for file: URL, through target: Double?, limit: Double, clock: BlockingWaitClock
    ) -> LedgerCatchUpOutcome {
        var watch = LedgerCatchUpWatch(file, through: target, limit: limit, now: clock.now())
        while true {
            switch watch.next(now: clock.now()) {
            case .look(let seconds): clock.sleep(seconds)
            case .stop(let stop): return watch.outcome(stop, now: clock.now())
            }
        }
    }
}
