/// Fixed window anchored at the key's first hit: the window opens at the first hit after the
/// previous one closed and lasts `windowSeconds`; the first `limit` hits in it pass. Every hit
/// counts, passed or not (as @nestjs/throttler counts). A hit exactly at the close opens the next.
struct AnchoredFixedWindowModel: LimiterModel {
    let limit: Int
    let windowSeconds: Double
    private var opened: Double?
    private var count = 0

    init(limit: Int, windowSeconds: Double) {
        self.limit = limit
        self.windowSeconds = windowSeconds
    }

    private func isOpen(at time: Double) -> Bool { opened.map { time < $0 + windowSeconds } ?? false }

    func admits(at time: Double) -> Bool { !isOpen(at: time) || count < limit }

    func secondsUntilAdmitted(at time: Double) -> Double {
        guard let opened, !admits(at: time) else { return 0 }
        return opened + windowSeconds - time
    }

    mutating func record(at time: Double, admitted: Bool) {
        if !isOpen(at: time) {
            opened = time
            count = 0
        }
        count += 1
    }
}
