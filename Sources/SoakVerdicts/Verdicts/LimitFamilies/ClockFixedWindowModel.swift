/// Fixed window aligned to the clock: window `k` is `[k·window, (k+1)·window)` in seconds since
/// the Unix epoch (`INCR key:<minute>`); the first `limit` hits in it pass. Every hit counts. A hit
/// exactly on an edge is in the window the edge opens.
struct ClockFixedWindowModel: LimiterModel {
    let limit: Int
    let windowSeconds: Double
    private var index: Double?
    private var count = 0

    init(limit: Int, windowSeconds: Double) {
        self.limit = limit
        self.windowSeconds = windowSeconds
    }

    private func window(of time: Double) -> Double { (time / windowSeconds).rounded(.down) }

    func admits(at time: Double) -> Bool { window(of: time) != index || count < limit }

    func secondsUntilAdmitted(at time: Double) -> Double {
        guard !admits(at: time) else { return 0 }
        return (window(of: time) + 1) * windowSeconds - time
    }

    mutating func record(at time: Double, admitted: Bool) {
        let current = window(of: time)
        // A hit replayed slightly out of order into an earlier window no longer changes the count.
        if let index, current < index { return }
        if current != index {
            index = current
            count = 0
        }
        count += 1
    }
}
