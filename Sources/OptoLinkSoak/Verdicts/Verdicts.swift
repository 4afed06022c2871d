/// The soak tester's judgements over one run's records (pure functions, no I/O).
///
/// The expectations are re-derived from the contract (CONTRACT §1 rate limits, §2 retry
/// matrix and back-off); nothing here calls the SDK's retry code.
public enum Verdicts {
    /// Evaluates every verdict.
    ///
    /// Attempt rows whose times are not finite (a damaged CSV) are left out and counted in
    /// ``VerdictsReport/ignoredAttempts``; nothing here traps on bad input.
    public static func evaluate(_ inputs: VerdictInputs) -> VerdictsReport {
        let configuration = inputs.configuration
        let attempts = inputs.attempts.filter {
            $0.actualStart.isFinite && $0.end.isFinite && $0.intendedStart.isFinite && $0.attempt >= 1
        }
        let groups = CallKey.group(attempts)
        return VerdictsReport(
            backoff: BackoffVerdict.evaluate(calls: groups, configuration: configuration),
            retries: RetryMatrixVerdict.evaluate(
                groups: groups, calls: inputs.calls, maxRetries: inputs.maxRetries, configuration: configuration),
            reconciliation: ReconciliationVerdict.evaluate(
                calls: inputs.calls, ledger: inputs.ledger, deviceIds: inputs.deviceIds,
                runStartEpoch: inputs.runStartEpoch, edgeToleranceSeconds: configuration.edgeToleranceSeconds),
            limits: LimitOracleVerdict.evaluate(attempts, configuration: configuration),
            attribution: AttributionVerdict.evaluate(inputs.attribution),
            ignoredAttempts: inputs.attempts.count - attempts.count)
    }
}
