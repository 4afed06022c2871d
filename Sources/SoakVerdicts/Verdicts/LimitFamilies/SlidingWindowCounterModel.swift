/// Sliding-window counter (the weighted two-window approximation): windows aligned to the clock
/// as ``ClockFixedWindowModel``'s; a hit at fraction `f` into window `k` passes when
/// `passes(k-1) · (1 - f) + passes(k) < limit`. Only passes are counted.
struct SlidingWindowCounterModel: LimiterModel {
    let limit: Int
    let windowSeconds: Double
    private var index: Double?
    private var current = 0
    private var previous = 0

    init(limit: Int, windowSeconds: Double) {
        self.limit = limit
        self.windowSeconds = windowSeconds
    }

    private func window(of time: Double) -> Double { (time / windowSeconds).rounded(.down) }

    /// Passes in the previous and the current window as seen at `time`, and the fraction of the
    /// current window gone.
    private func counts(at time: Double) -> (previous: Double, current: Double, fraction: Double) {
        let k = window(of: time)
        let fraction = time / windowSeconds - k
        switch index {
        case k: return (Double(previous), Double(current), fraction)
        case k - 1: return (Double(current), 0, fraction)
        default: return (0, 0, fraction)
        }
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
        if let index, k < index { return }
        if index == k - 1 {
            previous = current
            current = 0
        } else if index != k {
            previous = 0
            current = 0
        }
        index = k
        current += 1
    }
}
