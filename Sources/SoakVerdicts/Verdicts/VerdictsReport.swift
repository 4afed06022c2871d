/// Every verdict of one run; goes into `summary.json` under `"verdicts"`, one key per
/// registered verdict (``Verdicts/registry``) plus `ignoredAttempts`.
package struct VerdictsReport: Sendable, Codable, Equatable {
    /// The verdicts in registry order.
    package private(set) var results: [any Verdict]
    /// Attempt rows left out because their times were not finite numbers.
    package var ignoredAttempts: Int = 0

    /// A report of `results` (one per verdict type; a later one replaces an earlier one of its type).
    package init(results: [any Verdict], ignoredAttempts: Int = 0) {
        var unique: [any Verdict] = []
        for result in results {
            if let index = unique.firstIndex(where: { type(of: $0).key == type(of: result).key }) {
                unique[index] = result
            } else {
                unique.append(result)
            }
        }
        self.results = unique
        self.ignoredAttempts = ignoredAttempts
    }

    /// The five verdicts every run reports.
    package init(
        backoff: BackoffVerdict, retries: RetryMatrixVerdict, reconciliation: ReconciliationVerdict,
        limits: LimitOracleVerdict, attribution: AttributionVerdict, ignoredAttempts: Int = 0
    ) {
        self.init(results: [backoff, retries, reconciliation, limits, attribution], ignoredAttempts: ignoredAttempts)
    }

    /// The verdict of type `V`, or `nil` when the report has none.
    package subscript<V: Verdict>(_ type: V.Type) -> V? {
        results.lazy.compactMap { $0 as? V }.first
    }

    /// The verdict of type `V`, or the verdict of a pass over nothing.
    package func result<V: Verdict>(_ type: V.Type) -> V {
        self[type] ?? Verdicts.run(type, context: VerdictContext())
    }

    package var backoff: BackoffVerdict { result(BackoffVerdict.self) }
    package var retries: RetryMatrixVerdict { result(RetryMatrixVerdict.self) }
    package var reconciliation: ReconciliationVerdict { result(ReconciliationVerdict.self) }
    package var limits: LimitOracleVerdict { result(LimitOracleVerdict.self) }
    package var attribution: AttributionVerdict { result(AttributionVerdict.self) }

    /// Flat metric name → value, for thresholds (`backoff.early`, `retry.violations`,
    /// `events.duplicated`, `limits.match.too_lenient`, `attribution.correct_rate`, …).
    /// Counts are plain numbers, gaps seconds, rates fractions in 0…1. Sections that could not
    /// be computed (no ledger, no limits declared, no attribution records) emit nothing.
    package func metrics() -> [String: Double] {
        var metrics: [String: Double] = [:]
        for result in results { result.addMetrics(to: &metrics) }
        metrics["verdicts.ignored_attempts"] = Double(ignoredAttempts)
        return metrics
    }

    /// Metric-name prefix → why nothing was judged there (see ``Verdict/notExercised``).
    package func notExercised() -> [String: String] {
        results.reduce(into: [:]) { all, result in all.merge(result.notExercised) { first, _ in first } }
    }

    /// The verdicts as human-readable lines for the console and `summary.txt`, in registry order.
    package func summaryLines() -> [String] {
        results.flatMap { $0.summaryLines() }
    }

    // MARK: Codable and Equatable over the registry

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        func decode<V: Verdict>(_ type: V.Type) throws -> (any Verdict)? {
            try container.decodeIfPresent(type, forKey: Key(type.key))
        }
        var results: [any Verdict] = []
        for type in Verdicts.registry {
            if let result = try decode(type) { results.append(result) }
        }
        self.results = results
        ignoredAttempts = try container.decodeIfPresent(Int.self, forKey: Key("ignoredAttempts")) ?? 0
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        func encode<V: Verdict>(_ result: V) throws { try container.encode(result, forKey: Key(V.key)) }
        for result in results { try encode(result) }
        try container.encode(ignoredAttempts, forKey: Key("ignoredAttempts"))
    }

    package static func == (lhs: VerdictsReport, rhs: VerdictsReport) -> Bool {
        func same<V: Verdict>(_ a: V, _ b: any Verdict) -> Bool { (b as? V) == a }
        guard lhs.ignoredAttempts == rhs.ignoredAttempts, lhs.results.count == rhs.results.count else { return false }
        for index in lhs.results.indices {
            let left: any Verdict = lhs.results[index]
            if !same(left, rhs.results[index]) { return false }
        }
        return true
    }
}
