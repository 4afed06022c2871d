/// Sliding-window counter (the weighted two-window approximation): windows aligned to the clock
/// as ``ClockFixedWindowModel``'s; a hit at fraction `f` into window `k` passes when
/// `passes(k-1) · (1 - f) + passes(k) < limit`. Only passes are counted.
struct SlidingWindowCounterModel: LimiterModel {
    let limit: Int
    let windowSeconds: Double
    /// Passes per window index, the latest few only (see ``ClockFixedWindowModel``).
    private var passes: [Double: Int] = [:]

    init(limit: Int, windowSeconds: Double) {
        self.limit = limit
        self.windowSeconds = windowSeconds
    }

    private func window(of time: Double) -> Double { (time / windowSeconds).rounded(.down) }

    /// Passes in the previous and the current window of `time`, and the fraction of the current
    /// window gone.
    private func counts(at time: Double) -> (previous: Double, current: Double, fraction: Double) {
        let k = window(of: time)
        return (Double(passes[k - 1, default: 0]), Double(passes[k, default: 0]), time / windowSeconds - k)
    }

    func admits(at time: Double) -> Bool {
        let (previous, current, fraction) = counts(at: time)
        return previous * (1 - fraction) + current < Double(limit) - 1e-9
    }

    func secondsUntilAdmitted(at time: Double) -> Double {
        guard !admits(at: time) else { return 0 }
        let (previous, current, fraction) = counts(at: time)
        let limit = Double(limit)
        let windowEnd = (1 - fraction) * windowSeconds
        if current >= limit {
            // Next window: this one's passes become the weighted previous count.
            return windowEnd + max(0, windowSeconds * (1 - limit / current))
        }
        // The previous window's weight has to fall until there is room.
        let needed = windowSeconds * (1 - (limit - current) / previous)
        return min(max(0, needed - fraction * windowSeconds), windowEnd)
    }

    mutating func record(at time: Double, admitted: Bool) {
        guard admitted else { return }
        let k = window(of: time)
        passes[k, default: 0] += 1
        if passes.count > 4 { passes = passes.filter { $0.key >= k - 2 } }
    }
}
