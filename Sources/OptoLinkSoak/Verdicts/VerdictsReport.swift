/// Every verdict of one run; goes into `summary.json` under `"verdicts"`.
public struct VerdictsReport: Sendable, Codable, Equatable {
    public var backoff: BackoffVerdict
    public var retries: RetryMatrixVerdict
    public var reconciliation: ReconciliationVerdict
    public var limits: LimitOracleVerdict
    public var attribution: AttributionVerdict
    /// Attempt rows left out because their times were not finite numbers.
    public var ignoredAttempts: Int = 0

    public init(
        backoff: BackoffVerdict, retries: RetryMatrixVerdict, reconciliation: ReconciliationVerdict,
        limits: LimitOracleVerdict, attribution: AttributionVerdict, ignoredAttempts: Int = 0
    ) {
        self.backoff = backoff
        self.retries = retries
        self.reconciliation = reconciliation
        self.limits = limits
        self.attribution = attribution
        self.ignoredAttempts = ignoredAttempts
    }

    /// Flat metric name → value, for thresholds (`backoff.early`, `retry.violations`,
    /// `events.duplicated`, `limits.match.too_lenient`, `attribution.correct_rate`, …).
    /// Counts are plain numbers, gaps seconds, rates fractions in 0…1. Sections that could not
    /// be computed (no ledger, no limits declared, no attribution records) emit nothing.
    public func metrics() -> [String: Double] {
        var metrics: [String: Double] = [:]
        backoff.addMetrics(to: &metrics)
        retries.addMetrics(to: &metrics)
        reconciliation.addMetrics(to: &metrics)
        limits.addMetrics(to: &metrics)
        attribution.addMetrics(to: &metrics)
        metrics["verdicts.ignored_attempts"] = Double(ignoredAttempts)
        return metrics
    }
}
