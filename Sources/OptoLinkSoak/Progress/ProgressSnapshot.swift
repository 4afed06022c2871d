/// What the progress line shows at one moment.
package struct ProgressSnapshot: Sendable, Equatable {
    /// Seconds since run start.
    package var elapsed: Double
    package var scheduled: Int
    package var done: Int
    package var inFlight: Int
    package var requests: Int
    /// Requests per second since the previous snapshot.
    package var requestRate: Double
    package var status429: Int
    package var errors: Int
    /// p99 attempt latency so far, seconds.
    package var p99: Double
    /// Journeys started late per second since the previous snapshot (`nil`: not shown).
    package var lateStartsPerSecond: Double? = nil
    /// The generator process's CPU since the previous snapshot, as a share of its cores (`nil`: not shown).
    package var cpuShare: Double? = nil
    /// Calls sleeping out a 429's Retry-After (part of `inFlight`).
    package var waitingOnRetryAfter = 0

    package init(
        elapsed: Double, scheduled: Int, done: Int, inFlight: Int, requests: Int, requestRate: Double, status429: Int,
        errors: Int, p99: Double, waitingOnRetryAfter: Int = 0
    ) {
        self.elapsed = elapsed
        self.scheduled = scheduled
        self.done = done
        self.inFlight = inFlight
        self.requests = requests
        self.requestRate = requestRate
        self.status429 = status429
        self.errors = errors
        self.p99 = p99
        self.waitingOnRetryAfter = waitingOnRetryAfter
    }

    /// The one-line rendering, e.g.
    /// `[  12.0s] journeys 240/238 done · 2 in flight · 1520 req (130/s) · 429s 3 · errors 0 · p99 4.1ms`;
    /// with calls sleeping out a Retry-After, `… · 90 in flight · 38 waiting on 429 · 1520 req (0/s) …`,
    /// and when every request has stopped for them, `1520 req (all waiting on 429)` instead of `(0/s)`.
    package var line: String {
        func fixed(_ value: Double, _ digits: Int) -> String {
            let scale = Double([1, 10, 100, 1000][digits])
            let rounded = (value * scale).rounded() / scale
            var text = String(rounded)
            if let dot = text.firstIndex(of: ".") {
                let decimals = text.distance(from: dot, to: text.endIndex) - 1
                if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
            } else if digits > 0 {
                text += "." + String(repeating: "0", count: digits)
            }
            return text
        }
        let time = fixed(elapsed, 1)
        let padded = String(repeating: " ", count: Swift.max(0, 6 - time.count)) + time
        let rate = Int(requestRate.rounded())
        let waiting = waitingOnRetryAfter > 0 ? " · \(waitingOnRetryAfter) waiting on 429" : ""
        let pace = rate == 0 && waitingOnRetryAfter > 0 ? "all waiting on 429" : "\(rate)/s"
        return "[\(padded)s] journeys \(done)/\(scheduled) done · \(inFlight) in flight\(waiting) · \(requests) req "
            + "(\(pace)) · 429s \(status429) · errors \(errors) · p99 \(fixed(p99 * 1000, 1))ms"
            + generatorPart
    }

    /// ` · late 12/s · cpu 85%`: whether the generator keeps up (the parts it has).
    var generatorPart: String {
        (lateStartsPerSecond.map { " · late \(Int($0.rounded()))/s" } ?? "")
            + (cpuShare.map { " · cpu \(Int(($0 * 100).rounded()))%" } ?? "")
    }
}
