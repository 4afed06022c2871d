import Synchronization

/// Enforces ``StagingLimits`` per bucket (class + IP or key) and keeps per-window counters
/// of accepted and rejected hits for the ledger's counters.
///
/// Bounded: a key idle for two windows (no hit since two windows after its last window opened,
/// and for the sliding log every logged hit out of the window) is evicted; its totals stay in one "evicted keys" row per
/// bucket class, so the counters still add up. Sweeps run at most once per shortest window.
package final class RateLimiter: Sendable {
    private struct BucketKey: Hashable {
        var bucket: StagingBucketClass
        var key: String
    }

    private struct BucketState {
        /// Start of the current fixed window (epoch seconds).
        var windowStart: Double
        /// Hits (accepted and rejected) in the current fixed window.
        var hits: Int
        /// Accepted hit times within the last window (sliding log only).
        var log: [Double]
        /// Closed and current windows, oldest first, at most `maxWindows`.
        var windows: [StagingWindowCounter]
    }

    /// Totals of the keys evicted from one bucket class.
    private struct Retired {
        var keys = 0
        var accepted = 0
        var rejected = 0
        /// The evicted keys' windows, latest ``maxRetiredWindows`` only (oldest dropped first).
        var windows: [StagingWindowCounter] = []
    }

    private struct State {
        var limits: StagingLimits
        var buckets: [BucketKey: BucketState] = [:]
        var retired: [StagingBucketClass: Retired] = [:]
        var lastSweep = -Double.infinity
    }

    /// Whole windows a key must stay idle (no hit since its last window opened) to be evicted.
    static let idleWindows = 2.0

    /// The key of the counters row that sums a bucket class's evicted keys.
    package static let evictedKey = "(evicted keys)"

    package static let maxWindows = 256
    /// Windows of evicted keys kept per bucket class for the counters (24 bytes each, up to twice
    /// as many between trims). Their totals are kept whole; the windows are only shown. Each
    /// (key, window) pair with a hit retires one: per client IP with `data`'s 1 s window that is
    /// one per `/data` call, so a larger cap grew a long run's emulator for hours (65,536 took
    /// about 1.5 h of a 24 journeys/s soak to reach, adding 1.5–3 MiB per hour until then).
    package static let maxRetiredWindows = 4_096
    private let state: Mutex<State>

    package init(limits: StagingLimits) { state = Mutex(State(limits: limits)) }

    /// Counts one hit on `bucket`/`key` at `now` (epoch seconds) and decides.
    package func hit(_ bucket: StagingBucketClass, key: String, now: Double) -> RateLimitDecision {
        state.withLock { state in
            guard state.limits.enabled else { return .allowed }
            defer { Self.sweepIfDue(&state, now: now) }
            let rule = state.limits.rule(for: bucket)
            let algorithm = state.limits.algorithm
            let id = BucketKey(bucket: bucket, key: key)
            var b =
                state.buckets.removeValue(forKey: id)
                ?? BucketState(windowStart: now, hits: 0, log: [], windows: [])
            if b.windows.isEmpty || now >= b.windowStart + rule.windowSeconds {
                b.windowStart = now
                b.hits = 0
                b.windows.append(StagingWindowCounter(start: now, accepted: 0, rejected: 0))
                if b.windows.count > Self.maxWindows { b.windows.removeFirst(b.windows.count - Self.maxWindows) }
            }
            b.hits += 1
            let decision: RateLimitDecision
            switch algorithm {
            case .fixedWindow:
                decision =
                    b.hits <= rule.limit
                    ? .allowed
                    : .limited(retryAfterSeconds: Self.wholeSeconds(b.windowStart + rule.windowSeconds - now))
            case .slidingLog:
                let horizon = now - rule.windowSeconds
                if let firstKept = b.log.firstIndex(where: { $0 > horizon }) {
                    if firstKept > 0 { b.log.removeFirst(firstKept) }
                } else {
                    b.log.removeAll(keepingCapacity: true)
                }
                if b.log.count < rule.limit {
                    b.log.append(now)
                    decision = .allowed
                } else {
                    decision = .limited(retryAfterSeconds: Self.wholeSeconds(b.log[0] + rule.windowSeconds - now))
                }
            }
            let last = b.windows.count - 1
            if decision == .allowed { b.windows[last].accepted += 1 } else { b.windows[last].rejected += 1 }
            state.buckets[id] = b
            return decision
        }
    }

    /// Replaces the limits; existing windows keep their start times.
    func setLimits(_ limits: StagingLimits) { state.withLock { $0.limits = limits } }

    func limits() -> StagingLimits { state.withLock { $0.limits } }

    /// Forgets every bucket and its counters.
    func reset() {
        state.withLock {
            $0.buckets.removeAll()
            $0.retired.removeAll()
        }
    }

    /// Keys currently held (evicted ones not counted).
    package var keyCount: Int { state.withLock { $0.buckets.count } }

    /// Windows held for evicted keys, all bucket classes together (at most twice
    /// ``maxRetiredWindows`` per class).
    package var retiredWindowCount: Int { state.withLock { $0.retired.values.reduce(0) { $0 + $1.windows.count } } }

    /// Evicts every key idle past its window at `now` (epoch seconds).
    func sweep(now: Double) { state.withLock { Self.sweep(&$0, now: now) } }

    private static func sweepIfDue(_ state: inout State, now: Double) {
        let shortest = StagingBucketClass.allCases.map { state.limits.rule(for: $0).windowSeconds }.min() ?? 60
        guard now - state.lastSweep >= max(1, shortest) else { return }
        sweep(&state, now: now)
    }

    private static func sweep(_ state: inout State, now: Double) {
        state.lastSweep = now
        let limits = state.limits
        for (id, b) in state.buckets {
            let window = limits.rule(for: id.bucket).windowSeconds
            guard now >= b.windowStart + Self.idleWindows * window, (b.log.last ?? -Double.infinity) <= now - window
            else { continue }
            state.buckets.removeValue(forKey: id)
            var retired = state.retired[id.bucket] ?? Retired()
            retired.keys += 1
            retired.accepted += b.windows.reduce(0) { $0 + $1.accepted }
            retired.rejected += b.windows.reduce(0) { $0 + $1.rejected }
            retired.windows += b.windows
            if retired.windows.count > 2 * maxRetiredWindows {
                retired.windows.removeFirst(retired.windows.count - maxRetiredWindows)
            }
            state.retired[id.bucket] = retired
        }
    }

    /// Per-bucket counters, sorted by bucket class then key; `mask` renders a key for output.
    /// Evicted keys of a class appear as one row with key ``evictedKey``: their totals and
    /// their latest windows (not in time order across keys).
    package func snapshot(mask: (StagingBucketClass, String) -> String) -> [StagingBucketCounters] {
        let copy = state.withLock { state in (state.limits, state.buckets, state.retired) }
        let live = copy.1.map { id, b in
            let rule = copy.0.rule(for: id.bucket)
            return StagingBucketCounters(
                bucket: id.bucket, key: mask(id.bucket, id.key), limit: rule.limit, windowSeconds: rule.windowSeconds,
                accepted: b.windows.reduce(0) { $0 + $1.accepted }, rejected: b.windows.reduce(0) { $0 + $1.rejected },
                windows: b.windows)
        }
        let evicted = copy.2.map { bucket, retired in
            let rule = copy.0.rule(for: bucket)
            return StagingBucketCounters(
                bucket: bucket, key: Self.evictedKey, limit: rule.limit, windowSeconds: rule.windowSeconds,
                accepted: retired.accepted, rejected: retired.rejected,
                windows: Array(retired.windows.suffix(Self.maxRetiredWindows)))
        }
        return (live + evicted).sorted { ($0.bucket.rawValue, $0.key) < ($1.bucket.rawValue, $1.key) }
    }

    /// Whole seconds until `remaining` elapses, rounded up, never below 1.
    package static func wholeSeconds(_ remaining: Double) -> Int {
        guard remaining.isFinite else { return remaining > 0 ? 1_000_000_000 : 1 }
        return max(1, Int(min(remaining, 1e9).rounded(.up)))
    }
}
