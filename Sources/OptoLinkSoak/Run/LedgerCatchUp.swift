import Foundation

/// When to stop waiting for a `--ledger FILE` the backend may still be writing, read after the
/// run: once it holds a row at or after the run's last successful write (then a little longer,
/// until it stops growing, for rows written out of order), once it stops growing without getting
/// there, or at the limit (`--ledger-wait SECONDS`). A pure state machine: the caller looks at the
/// file (``LedgerFileTail``) and sleeps on its own clock between steps.
struct LedgerCatchUp {
    /// Why the wait ended.
    enum Stop: String, Equatable {
        /// The file holds a row at or after the last successful write and then stopped growing.
        case caughtUp = "caught up"
        /// The file stopped growing before it got there.
        case stoppedGrowing = "stopped growing"
        /// The limit passed first.
        case limitReached = "limit reached"
    }

    /// What to do next.
    enum Step: Equatable {
        /// Look at the file again after this many seconds.
        case look(after: Double)
        case stop(Stop)
    }

    /// How often the file is looked at, seconds.
    static let pollSeconds = 0.1
    /// How long a caught-up file must not grow before the wait ends: a backend that writes its
    /// rows out of order may still be writing ones that arrived before the last write.
    static let settleSeconds = 1.0
    /// The default `--ledger-wait`, seconds.
    static let defaultLimitSeconds = 5.0

    /// How long to wait at most, seconds (`--ledger-wait`).
    let limit: Double
    /// How long a file that has not caught up must not grow before the wait gives up on it.
    var stallSeconds: Double { max(1, limit / 2) }
    private var started: Double?
    private var lastGrowth = 0.0
    private var lastSize: UInt64 = 0

    init(limit: Double) { self.limit = max(0, limit) }

    /// The next step at `now` (seconds on the caller's clock), given the file's size and whether
    /// it reaches the run's last successful write.
    mutating func step(now: Double, size: UInt64, reaches: Bool) -> Step {
        let start = started ?? now
        if started == nil {
            started = now
            lastGrowth = now
            lastSize = size
        } else if size != lastSize {
            lastSize = size
            lastGrowth = now
        }
        let quiet = now - lastGrowth
        if reaches && quiet >= Self.settleSeconds { return .stop(.caughtUp) }
        if now - start >= limit - 1e-9 { return .stop(reaches ? .caughtUp : .limitReached) }
        if !reaches && quiet >= stallSeconds { return .stop(.stoppedGrowing) }
        return .look(after: min(Self.pollSeconds, start + limit - now))
    }
}
