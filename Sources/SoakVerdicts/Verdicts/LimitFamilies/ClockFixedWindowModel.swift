/// Fixed window aligned to the clock: window `k` is `[k·window, (k+1)·window)` in seconds since
/// the Unix epoch (`INCR key:<minute>`); the first `limit` hits in it pass. Every hit counts. A hit
/// exactly on an edge is in the window the edge opens.
struct ClockFixedWindowModel: LimiterModel {
    let limit: Int
    let windowSeconds: Double
    /// Hits per window index, the latest few only: a hit just before an edge may be replayed
    /// after one just past it (their arrival intervals overlap), and still counts in its own.
    private var counts: [Double: Int] = [:]

    init(limit: Int, windowSeconds: Double) {
        self.limit = limit
        self.windowSeconds = windowSeconds
    }

    private func window(of time: Double) -> Double { (time / windowSeconds).rounded(.down) }

    func admits(at time: Double) -> Bool { counts[window(of: time), default: 0] < limit }

    func secondsUntilAdmitted(at time: Double) -> Double {
        guard !admits(at: time) else { return 0 }
        return (window(of: time) + 1) * windowSeconds - time
    }

    mutating func record(at time: Double, admitted: Bool) {
        let current = window(of: time)
        counts[current, default: 0] += 1
        if counts.count > 4 { counts = counts.filter { $0.key >= current - 2 } }
    }
}
