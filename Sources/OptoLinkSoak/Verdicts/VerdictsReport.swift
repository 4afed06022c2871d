/// Every verdict of one run; goes into `summary.json` under `"verdicts"`.
public struct VerdictsReport: Sendable, Codable, Equatable {
    public var backoff: BackoffVerdict
    public var retries: RetryMatrixVerdict
    public var reconciliation: ReconciliationVerdict
    public var limits: LimitOracleVerdict
    public var attribution: AttributionVerdict

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
        return metrics
    }
}
