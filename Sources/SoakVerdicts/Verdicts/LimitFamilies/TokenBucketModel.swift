/// Token bucket (GCRA is equivalent): `limit` tokens, refilled at `limit / windowSeconds` per
/// second, starting full; a hit passes when a whole token is there and takes it. Rejected hits
/// take nothing.
struct TokenBucketModel: LimiterModel {
    let limit: Int
    let windowSeconds: Double
    private var tokens: Double
    private var last: Double?

    init(limit: Int, windowSeconds: Double) {
        self.limit = limit
        self.windowSeconds = windowSeconds
        tokens = Double(limit)
    }

    private var rate: Double { Double(limit) / windowSeconds }

    private func tokens(at time: Double) -> Double {
        guard let last else { return tokens }
        return min(Double(limit), tokens + max(0, time - last) * rate)
    }

    func admits(at time: Double) -> Bool { tokens(at: time) >= 1 - 1e-9 }

    func secondsUntilAdmitted(at time: Double) -> Double { max(0, (1 - tokens(at: time)) / rate) }

    mutating func record(at time: Double, admitted: Bool) {
        guard admitted else { return }
        // A pass the model had no token for (a lenient server) leaves the bucket empty, not in debt.
        tokens = max(0, tokens(at: time) - 1)
        last = max(last ?? time, time)
    }
}
