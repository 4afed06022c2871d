import SoakRecords

/// One retry the back-off verdict judges: the attempt before it, what it waited for and how long
/// (docs/CONTRACT.md §2, "Back-off"). The verdict counts these and the report draws them, from
/// one definition.
package struct JudgedRetry: Sendable, Equatable {
    /// The attempt the retry followed.
    package var previous: AttemptRecord
    /// The retry's attempt number (2 = first retry).
    package var attempt: Int
    /// What the retry waited for: a 429's `N`, or the exponential table.
    package var cause: BackoffCause
    /// A 429 without a parseable `N` (judged against the exponential table).
    package var rateLimitedWithoutN: Bool
    /// `actualStart(retry) − end(previous)`, seconds.
    package var gapSeconds: Double
    /// The wait the contract asks for, seconds.
    package var expectedSeconds: Double

    /// `gap − expected`, seconds: negative is early.
    package var excessSeconds: Double { gapSeconds - expectedSeconds }

    /// The retries of one call that the retry matrix requires, in attempt order. `attempts` are
    /// the call's attempts sorted by attempt number.
    package static func retries(of attempts: some Collection<AttemptRecord>) -> [JudgedRetry] {
        var result: [JudgedRetry] = []
        for (previous, next) in zip(attempts, attempts.dropFirst()) {
            let outcome = ContractRetryExpectation.Outcome(previous)
            guard ContractRetryExpectation.requiresRetry(after: outcome, endpoint: previous.endpoint) else {
                continue
            }
            let retryIndex = max(0, next.attempt - 2)
            var cause = BackoffCause.exponential
            var withoutN = false
            if case .rateLimited(let n) = outcome {
                if n == nil { withoutN = true } else { cause = .rateLimited }
            }
            result.append(
                JudgedRetry(
                    previous: previous, attempt: next.attempt, cause: cause, rateLimitedWithoutN: withoutN,
                    gapSeconds: next.actualStart - previous.end,
                    expectedSeconds: ContractRetryExpectation.expectedBackoff(after: outcome, retryIndex: retryIndex)))
        }
        return result
    }

    /// Early when the gap falls short of the expected wait by more than `earlySlackSeconds`, late
    /// when it is over by more than `toleranceSeconds`, else on time.
    package func judgement(earlySlackSeconds: Double, toleranceSeconds: Double) -> BackoffJudgement {
        let excess = excessSeconds
        if excess < -earlySlackSeconds { return .early }
        return excess <= toleranceSeconds ? .onTime : .late
    }
}
