/// The rate-limiter algorithms real backends use, which the limit oracle fits a server's
/// answers to (`limits.<bucket>.family` in `summary.json`).
package enum LimiterFamily: String, Sendable, Codable, CaseIterable {
    /// A key's window opens at its first hit and lasts the window length (@nestjs/throttler).
    case fixedWindow = "fixed_window"
    /// Windows aligned to the clock: `floor(epoch seconds / window)` (the `INCR key:<minute>` kind).
    case fixedWindowClock = "fixed_window_clock"
    /// A hit passes when fewer than `limit` passes arrived in the preceding window length.
    case slidingLog = "sliding_log"
    /// The two-window approximation: clock-aligned windows, the previous one's count weighted by
    /// how much of it the sliding window still covers.
    case slidingWindowCounter = "sliding_window_counter"
    /// A bucket of `limit` tokens refilled at `limit / window` per second (GCRA is the same).
    case tokenBucket = "token_bucket"

    /// The family the profile's `expect.algorithm` declares.
    package init(_ algorithm: VerdictsConfiguration.WindowAlgorithm) {
        switch algorithm {
        case .fixedWindow: self = .fixedWindow
        case .slidingWindow: self = .slidingLog
        }
    }

    /// A fresh (empty) key under this family.
    func makeModel(limit: Int, windowSeconds: Double) -> any LimiterModel {
        switch self {
        case .fixedWindow: AnchoredFixedWindowModel(limit: limit, windowSeconds: windowSeconds)
        case .fixedWindowClock: ClockFixedWindowModel(limit: limit, windowSeconds: windowSeconds)
        case .slidingLog: SlidingLogModel(limit: limit, windowSeconds: windowSeconds)
        case .slidingWindowCounter: SlidingWindowCounterModel(limit: limit, windowSeconds: windowSeconds)
        case .tokenBucket: TokenBucketModel(limit: limit, windowSeconds: windowSeconds)
        }
    }

    /// How the report names it.
    package var title: String {
        switch self {
        case .fixedWindow: "fixed window from the first hit"
        case .fixedWindowClock: "fixed window on clock edges"
        case .slidingLog: "sliding log"
        case .slidingWindowCounter: "sliding-window counter"
        case .tokenBucket: "token bucket"
        }
    }

    /// Whether a correct limiter of this family passes up to twice the limit across a window
    /// edge (a property of the family, not a breach).
    package var burstsAtEdges: Bool { self == .fixedWindow || self == .fixedWindowClock }
}
