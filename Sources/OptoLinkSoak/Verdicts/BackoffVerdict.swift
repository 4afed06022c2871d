import OptoLink

/// Back-off adherence: did each retry wait what the contract says after the attempt before it
/// (CONTRACT §2, "Back-off")?
///
/// For every retry the matrix permits, `gap = actualStart(retry) − end(previous attempt)` in
/// seconds is compared with the expected wait: the 429's parsed `N` seconds, otherwise
/// `min(0.5 · 2ⁿ, 5)` with `n` the retry index (0 for the first retry). A gap shorter than
/// expected (minus a rounding slack) is **early** — a violation; up to the profile's tolerance
/// longer is **on time**; longer still is **late**. Retries the matrix forbids are the retry
/// audit's business and are not judged here.
public struct BackoffVerdict: Sendable, Codable, Equatable {
    /// Early / on time / late counts for one cause of waiting.
    public struct Counts: Sendable, Codable, Equatable {
        public var checked = 0
        public var early = 0
        public var onTime = 0
        public var late = 0

        public init() {}
    }

    /// One judged retry.
    public struct Offender: Sendable, Codable, Equatable {
        public var device: String
        public var launch: Int
        public var callId: UInt64
        public var endpoint: OptoLinkEndpoint
        /// The retry's attempt number (2 = first retry).
        public var attempt: Int
        /// `rate_limited` (after a 429 with `N`) or `exponential`.
        public var cause: String
        public var gapSeconds: Double
        public var expectedSeconds: Double
    }

    /// One bar of the gap-excess histogram: `gap − expected` in `[lowerSeconds, upperSeconds)`.
    public struct Bar: Sendable, Codable, Equatable {
        public var lowerSeconds: Double?
        public var upperSeconds: Double?
        public var count: Int
    }

    /// Retries after a 429 that carried `N`.
    public var rateLimited = Counts()
    /// Retries after a connection error, timeout, 5xx (repeat-safe endpoints) or a 429 without `N`.
    public var exponential = Counts()
    /// 429s without a parseable `N` that were retried (judged against the exponential table).
    public var rateLimitedWithoutN = 0
    /// `gap − expected` (seconds) of every judged retry.
    public var excess: Distribution
    /// The same, bucketed: negative (early), then 0–50 ms, 50–250 ms, 0.25–1 s, 1–5 s, ≥ 5 s.
    public var excessHistogram: [Bar]
    /// The earliest retries (largest shortfall first), at most the profile's offender count.
    public var worstEarly: [Offender]
    /// The latest retries (largest excess first).
    public var worstLate: [Offender]

    public var total: Counts {
        var sum = Counts()
        sum.checked = rateLimited.checked + exponential.checked
        sum.early = rateLimited.early + exponential.early
        sum.onTime = rateLimited.onTime + exponential.onTime
        sum.late = rateLimited.late + exponential.late
        return sum
    }

    /// Judges every permitted retry in `attempts`.
    public static func evaluate(_ attempts: [AttemptRecord], configuration: VerdictsConfiguration) -> BackoffVerdict {
        evaluate(calls: CallKey.group(attempts), configuration: configuration)
    }

    /// The same over attempts already grouped by call.
    static func evaluate(calls groups: [CallKey.Group], configuration: VerdictsConfiguration) -> BackoffVerdict {
        var rateLimited = Counts()
        var exponential = Counts()
        var withoutN = 0
        var early: [(shortfall: Double, offender: Offender)] = []
        var late: [(excess: Double, offender: Offender)] = []
        var excesses: [Double] = []

        for (key, callAttempts) in groups {
            for (previous, next) in zip(callAttempts, callAttempts.dropFirst()) {
                let outcome = ContractRetryExpectation.Outcome(previous)
                guard ContractRetryExpectation.requiresRetry(after: outcome, endpoint: previous.endpoint) else { continue }
                let retryIndex = max(0, next.attempt - 2)
                let expected = ContractRetryExpectation.expectedBackoff(after: outcome, retryIndex: retryIndex)
                var cause = "exponential"
                if case .rateLimited(let n) = outcome {
                    if n == nil { withoutN += 1 } else { cause = "rate_limited" }
                }
                let gap = next.actualStart - previous.end
                let excess = gap - expected
                excesses.append(excess)
                let offender = Offender(
                    device: key.device, launch: key.launch, callId: key.callId, endpoint: previous.endpoint,
                    attempt: next.attempt, cause: cause, gapSeconds: gap, expectedSeconds: expected)
                var counts = cause == "rate_limited" ? rateLimited : exponential
                counts.checked += 1
                if excess < -configuration.backoffEarlySlackSeconds {
                    counts.early += 1
                    early.append((-excess, offender))
                } else if excess <= configuration.backoffToleranceSeconds {
                    counts.onTime += 1
                } else {
                    counts.late += 1
                    late.append((excess, offender))
                }
                if cause == "rate_limited" { rateLimited = counts } else { exponential = counts }
            }
        }

        let limit = max(0, configuration.worstOffenderCount)
        return BackoffVerdict(
            rateLimited: rateLimited,
            exponential: exponential,
            rateLimitedWithoutN: withoutN,
            excess: Distribution(excesses),
            excessHistogram: histogram(excesses),
            worstEarly: early.sorted { $0.shortfall > $1.shortfall }.prefix(limit).map(\.offender),
            worstLate: late.sorted { $0.excess > $1.excess }.prefix(limit).map(\.offender))
    }

    private static func histogram(_ values: [Double]) -> [Bar] {
        let edges: [Double?] = [nil, 0, 0.05, 0.25, 1, 5, nil]
        return zip(edges, edges.dropFirst()).map { lower, upper in
            Bar(
                lowerSeconds: lower, upperSeconds: upper,
                count: values.filter { ($0 >= (lower ?? -.infinity)) && ($0 < (upper ?? .infinity)) }.count)
        }
    }

    func addMetrics(to metrics: inout [String: Double]) {
        for (prefix, counts) in [("backoff", total), ("backoff.429", rateLimited), ("backoff.exponential", exponential)] {
            metrics["\(prefix).checked"] = Double(counts.checked)
            metrics["\(prefix).early"] = Double(counts.early)
            metrics["\(prefix).on_time"] = Double(counts.onTime)
            metrics["\(prefix).late"] = Double(counts.late)
        }
        metrics["backoff.429.without_n"] = Double(rateLimitedWithoutN)
        excess.addMetrics(prefix: "backoff.gap_excess", to: &metrics)
    }
}
