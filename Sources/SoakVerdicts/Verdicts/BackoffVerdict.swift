import SoakRecords

/// Back-off adherence: did each retry wait what the contract says after the attempt before it
/// (docs/CONTRACT.md §2, "Back-off")?
///
/// For every retry the matrix permits, `gap = actualStart(retry) − end(previous attempt)` in
/// seconds is compared with the expected wait: the 429's parsed `N` seconds, otherwise
/// `min(0.5 · 2ⁿ, 5)` with `n` the retry index (0 for the first retry). A gap shorter than
/// expected (minus a rounding slack) is **early** — a violation; up to the profile's tolerance
/// longer is **on time**; longer still is **late**. Retries the matrix forbids are the retry
/// audit's business and are not judged here.
package struct BackoffVerdict: Verdict {
    /// Early / on time / late counts for one cause of waiting.
    package struct Counts: Sendable, Codable, Equatable {
        package var checked = 0
        package var early = 0
        package var onTime = 0
        package var late = 0

        package init() {}

        /// The count of one judgement.
        package subscript(judgement: BackoffJudgement) -> Int {
            switch judgement {
            case .early: early
            case .onTime: onTime
            case .late: late
            }
        }
    }

    /// 429s no retry followed (`summary.json` `verdicts.backoff.rateLimitedNotRetried`).
    package struct NotRetried: Sendable, Codable, Equatable {
        /// The run ended first: its cutoff cancelled the call (in its back-off or in flight), or
        /// the call was still open when the records ended.
        package var runEnded = 0
        /// The call ended with the 429: its retry budget was spent, or its endpoint is never
        /// retried (the session check-in).
        package var callEnded = 0

        package init(runEnded: Int = 0, callEnded: Int = 0) {
            self.runEnded = runEnded
            self.callEnded = callEnded
        }
    }

    /// One judged retry.
    package struct Offender: Sendable, Codable, Equatable {
        package var device: String
        package var launch: Int
        package var callId: UInt64
        package var endpoint: ContractEndpoint
        /// The retry's attempt number (2 = first retry).
        package var attempt: Int
        /// What the retry waited for.
        package var cause: BackoffCause
        package var gapSeconds: Double
        package var expectedSeconds: Double
    }

    /// One bar of the gap-excess histogram: `gap − expected` in `[lowerSeconds, upperSeconds)`.
    package struct Bar: Sendable, Codable, Equatable {
        package var lowerSeconds: Double?
        package var upperSeconds: Double?
        package var count: Int
    }

    /// Retries after a 429 that carried `N`.
    package var rateLimited = Counts()
    /// Retries after a connection error, timeout, 5xx (repeat-safe endpoints) or a 429 without `N`.
    package var exponential = Counts()
    /// 429s without a parseable `N` that were retried (judged against the exponential table).
    package var rateLimitedWithoutN = 0
    /// 429s that were the last attempt of their call, by why no retry followed; `nil` in reports
    /// written before they were counted.
    package var rateLimitedNotRetried: NotRetried? = nil
    /// `gap − expected` (seconds) of every judged retry.
    package var excess: Distribution
    /// The same, bucketed: negative (early), then 0–50 ms, 50–250 ms, 0.25–1 s, 1–5 s, ≥ 5 s.
    package var excessHistogram: [Bar]
    /// The earliest retries (largest shortfall first), at most the profile's offender count.
    package var worstEarly: [Offender]
    /// The latest retries (largest excess first).
    package var worstLate: [Offender]

    package var total: Counts {
        var sum = Counts()
        sum.checked = rateLimited.checked + exponential.checked
        sum.early = rateLimited.early + exponential.early
        sum.onTime = rateLimited.onTime + exponential.onTime
        sum.late = rateLimited.late + exponential.late
        return sum
    }

    /// Judges every permitted retry in `attempts`.
    package static func evaluate(_ attempts: [AttemptRecord], configuration: VerdictsConfiguration) -> BackoffVerdict {
        Verdicts.run(Self.self, attempts: attempts, context: VerdictContext(configuration: configuration))
    }

    package static let key = "backoff"

    package static var metricPatterns: [MetricPattern] {
        let counts = MetricPatternPart.oneOf(["checked"] + BackoffJudgement.allCases.map(\.rawValue))
        return [
            MetricPattern("backoff", counts),
            MetricPattern("backoff", ["429", "exponential"], counts),
            MetricPattern("backoff", "429", "without_n"),
            MetricPattern("backoff", "gap_excess", .oneOf(Distribution.metricSuffixes), unit: .seconds),
        ]
    }

    package static func makePass(_ context: VerdictContext) -> Pass { Pass(configuration: context.configuration) }

    package var notExercised: [String: String] {
        var result: [String: String] = [:]
        if total.checked == 0 { result["backoff"] = "no retry was judged" }
        if rateLimited.checked == 0 { result["backoff.429"] = "no retry after a 429 with N was judged" }
        if exponential.checked == 0 { result["backoff.exponential"] = "no retry on the exponential table was judged" }
        return result
    }

    /// Judges the retries of each call once it closes (its attempts grouped by ``CallGroupPass``).
    package struct Pass: CallGroupPass {
        let configuration: VerdictsConfiguration
        package typealias Output = BackoffVerdict
        package var ownGroups = CallGroups()
        var rateLimited = Counts()
        var exponential = Counts()
        var withoutN = 0
        var notRetried = NotRetried()
        var early = WorstList<Offender>()
        var late = WorstList<Offender>()
        var excesses = DistributionSketch()
        var excessBars = BackoffVerdict.histogram([])

        init(configuration: VerdictsConfiguration) {
            self.configuration = configuration
            let limit = max(0, configuration.worstOffenderCount)
            early = WorstList(limit: limit)
            late = WorstList(limit: limit)
        }

        package mutating func finish(streamEnd: Double) -> BackoffVerdict {
            BackoffVerdict(
                rateLimited: rateLimited,
                exponential: exponential,
                rateLimitedWithoutN: withoutN,
                rateLimitedNotRetried: notRetried,
                excess: excesses.distribution,
                excessHistogram: excessBars,
                worstEarly: early.sorted,
                worstLate: late.sorted)
        }

        package mutating func judge(_ group: CallGroups.Closed, streamEnd: Double) {
            let key = group.key
            let callAttempts = group.attempts
            if let last = callAttempts.last, last.status == 429 {
                let cut = group.call.map { [.cancelledByRun, .unfinished].contains($0.outcome) } ?? true
                if cut { notRetried.runEnded += 1 } else { notRetried.callEnded += 1 }
            }
            for retry in JudgedRetry.retries(of: callAttempts) {
                if retry.rateLimitedWithoutN { withoutN += 1 }
                let cause = retry.cause
                let excess = retry.excessSeconds
                excesses.append(excess)
                BackoffVerdict.count(excess, in: &excessBars)
                let offender = Offender(
                    device: key.device, launch: key.launch, callId: key.callId, endpoint: retry.previous.endpoint,
                    attempt: retry.attempt, cause: cause, gapSeconds: retry.gapSeconds,
                    expectedSeconds: retry.expectedSeconds)
                var counts = cause == .rateLimited ? rateLimited : exponential
                counts.checked += 1
                let order = WorstOrder(key: key, attempt: retry.attempt)
                let judgement = retry.judgement(
                    earlySlackSeconds: configuration.backoffEarlySlackSeconds,
                    toleranceSeconds: configuration.backoffToleranceSeconds)
                switch judgement {
                case .early:
                    counts.early += 1
                    early.insert(offender, badness: -excess, order: order)
                case .onTime:
                    counts.onTime += 1
                case .late:
                    counts.late += 1
                    late.insert(offender, badness: excess, order: order)
                }
                if cause == .rateLimited { rateLimited = counts } else { exponential = counts }
            }
        }
    }

    /// Adds one excess (seconds) to the bar whose range holds it.
    package static func count(_ value: Double, in bars: inout [Bar]) {
        for index in bars.indices
        where value >= (bars[index].lowerSeconds ?? -.infinity) && value < (bars[index].upperSeconds ?? .infinity) {
            bars[index].count += 1
        }
    }

    private static func histogram(_ values: [Double]) -> [Bar] {
        let edges: [Double?] = [nil, 0, 0.05, 0.25, 1, 5, nil]
        return zip(edges, edges.dropFirst()).map { lower, upper in
            Bar(
                lowerSeconds: lower, upperSeconds: upper,
                count: values.filter { ($0 >= (lower ?? -.infinity)) && ($0 < (upper ?? .infinity)) }.count)
        }
    }

    package func addMetrics(to metrics: inout [String: Double]) {
        for (prefix, counts) in [
            ("backoff", total), ("backoff.429", rateLimited), ("backoff.exponential", exponential),
        ] {
            metrics["\(prefix).checked"] = Double(counts.checked)
            for judgement in BackoffJudgement.allCases {
                metrics["\(prefix).\(judgement.rawValue)"] = Double(counts[judgement])
            }
        }
        metrics["backoff.429.without_n"] = Double(rateLimitedWithoutN)
        excess.addMetrics(prefix: "backoff.gap_excess", to: &metrics)
    }
}
