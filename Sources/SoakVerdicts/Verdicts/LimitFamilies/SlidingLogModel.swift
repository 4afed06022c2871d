/// Sliding log: a hit passes when fewer than `limit` passes arrived in the `windowSeconds` before
/// it. A pass leaves the log `windowSeconds` after it arrived (exactly then it no longer counts);
/// rejected hits are not logged.
struct SlidingLogModel: LimiterModel {
    let limit: Int
    let windowSeconds: Double
    /// Passes still in (or near) the window, ascending.
    private var log: [Double] = []

    init(limit: Int, windowSeconds: Double) {
        self.limit = limit
        self.windowSeconds = windowSeconds
    }

    /// The passes still counted at `time`, ascending.
    private func live(at time: Double) -> ArraySlice<Double> {
        let first = Self.firstIndex(in: log) { $0 + windowSeconds > time }
        let last = Self.firstIndex(in: log) { $0 > time }
        return first < last ? log[first..<last] : []
    }

    /// The first index of the ascending `values` where `isAfter` holds (it holds from there on).
    private static func firstIndex(in values: [Double], where isAfter: (Double) -> Bool) -> Int {
        var low = 0
        var high = values.count
        while low < high {
            let middle = (low + high) / 2
            if isAfter(values[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }

    func admits(at time: Double) -> Bool { live(at: time).count < limit }

    func secondsUntilAdmitted(at time: Double) -> Double {
        let passes = live(at: time)
        guard passes.count >= limit else { return 0 }
        // Room for one more once all but `limit - 1` of them left the window.
        return passes[passes.startIndex + passes.count - limit] + windowSeconds - time
    }

    mutating func record(at time: Double, admitted: Bool) {
        guard admitted else { return }
        var position = log.count
        while position > 0, log[position - 1] > time { position -= 1 }
        log.insert(time, at: position)
        // Keep one window of slack for hits replayed slightly out of order.
        let stale = Self.firstIndex(in: log) { $0 + 2 * windowSeconds > time }
        if stale > limit { log.removeFirst(stale) }
    }
}
