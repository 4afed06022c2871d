import SoakVerdicts

/// Reference limiters for the family-fit tests, written independently of the oracle's models:
/// each answers a list of arrival times (seconds since the Unix epoch) the way a server of that
/// family (or a faulty variant) would, with `N = ceil(seconds to wait)`.
enum LimiterServerSimulator {
    enum Kind {
        case family(LimiterFamily)
        /// Fixed window from the first hit whose window restarts at every 429.
        case resetOnReject
    }

    struct Answer {
        var time: Double
        var admitted: Bool
        var retryAfter: Int?
    }

    static func serve(_ times: [Double], _ kind: Kind, limit: Int, window: Double) -> [Answer] {
        switch kind {
        case .family(.fixedWindow): anchored(times, limit: limit, window: window, resetOnReject: false)
        case .resetOnReject: anchored(times, limit: limit, window: window, resetOnReject: true)
        case .family(.fixedWindowClock): clock(times, limit: limit, window: window)
        case .family(.slidingLog): slidingLog(times, limit: limit, window: window)
        case .family(.slidingWindowCounter): counter(times, limit: limit, window: window)
        case .family(.tokenBucket): tokenBucket(times, limit: limit, window: window)
        }
    }

    private static func up(_ seconds: Double) -> Int { max(1, Int(seconds.rounded(.up))) }

    private static func anchored(_ times: [Double], limit: Int, window: Double, resetOnReject: Bool) -> [Answer] {
        var closes = -Double.infinity
        var hits = 0
        return times.map { time in
            if time >= closes {
                closes = time + window
                hits = 0
            }
            hits += 1
            guard hits > limit else { return Answer(time: time, admitted: true) }
            if resetOnReject { closes = time + window }
            return Answer(time: time, admitted: false, retryAfter: up(closes - time))
        }
    }

    private static func clock(_ times: [Double], limit: Int, window: Double) -> [Answer] {
        var counts: [Int: Int] = [:]
        return times.map { time in
            let slot = Int((time / window).rounded(.down))
            counts[slot, default: 0] += 1
            if counts[slot, default: 0] <= limit { return Answer(time: time, admitted: true) }
            return Answer(time: time, admitted: false, retryAfter: up(Double(slot + 1) * window - time))
        }
    }

    private static func slidingLog(_ times: [Double], limit: Int, window: Double) -> [Answer] {
        var passes: [Double] = []
        return times.map { time in
            let inWindow = passes.filter { time - $0 < window }
            if inWindow.count < limit {
                passes.append(time)
                return Answer(time: time, admitted: true)
            }
            return Answer(time: time, admitted: false, retryAfter: up(inWindow[inWindow.count - limit] + window - time))
        }
    }

    private static func counter(_ times: [Double], limit: Int, window: Double) -> [Answer] {
        var passes: [Int: Int] = [:]
        func estimate(_ time: Double) -> Double {
            let slot = Int((time / window).rounded(.down))
            let gone = time / window - Double(slot)
            return Double(passes[slot - 1, default: 0]) * (1 - gone) + Double(passes[slot, default: 0])
        }
        return times.map { time in
            if estimate(time) < Double(limit) - 1e-9 {
                passes[Int((time / window).rounded(.down)), default: 0] += 1
                return Answer(time: time, admitted: true)
            }
            // Step forward in milliseconds until a hit would pass.
            var wait = 0.001
            while estimate(time + wait) >= Double(limit) - 1e-9 { wait += 0.001 }
            return Answer(time: time, admitted: false, retryAfter: up(wait))
        }
    }

    private static func tokenBucket(_ times: [Double], limit: Int, window: Double) -> [Answer] {
        let rate = Double(limit) / window
        var tokens = Double(limit)
        var last = times.first ?? 0
        return times.map { time in
            tokens = min(Double(limit), tokens + (time - last) * rate)
            last = time
            if tokens >= 1 - 1e-9 {
                tokens -= 1
                return Answer(time: time, admitted: true)
            }
            return Answer(time: time, admitted: false, retryAfter: up((1 - tokens) / rate))
        }
    }

    /// Bursty arrivals from `start`: `count` gaps of 0.02…0.5 s from a fixed linear congruential
    /// sequence (the same every run).
    static func arrivals(from start: Double, count: Int) -> [Double] {
        var state: UInt64 = 0x2545_F491
        var time = start
        return (0..<count).map { _ in
            defer {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                time += 0.02 + Double(state >> 40) / Double(1 << 24) * 0.48
            }
            return time
        }
    }

    /// The answers as the client saw them: each arrival measured within 2 ms before to 3 ms after.
    static func observations(_ answers: [Answer], key: String = "10.0.0.1") -> [LimiterObservation] {
        answers.map {
            LimiterObservation(
                key: key, earliest: $0.time - 0.002, latest: $0.time + 0.003, admitted: $0.admitted,
                retryAfterSeconds: $0.retryAfter)
        }
    }
}
