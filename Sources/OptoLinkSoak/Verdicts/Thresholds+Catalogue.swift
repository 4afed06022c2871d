import Foundation

/// The metric naming scheme (`Reports/README.md`, `Profiles/verdicts/README.md`) as patterns, so a
/// profile's thresholds can be checked before the run: a malformed expression or a metric name
/// that no run could ever produce is a profile error, not a failed threshold an hour later.
///
/// A name that fits a pattern may still be missing after the run (no `/match` call was made, no
/// ledger was given): that stays a failed threshold "not available in this run".
extension Thresholds {
    /// Every metric name a run can produce: the run's own measurements (``SummaryMetrics``)
    /// and each registered verdict's, all spelled from the shared vocabularies.
    static let catalogue: [MetricPattern] = SummaryMetrics.patterns + Verdicts.metricPatterns

    /// Whether `metric` fits the naming scheme.
    static func isKnownMetric(_ metric: String) -> Bool {
        let parts = metric.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return catalogue.contains { $0.matches(parts) }
    }

    /// The known metric name closest to `metric` (at most a few edits away), for "did you mean".
    static func suggestion(for metric: String) -> String? {
        let parts = metric.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var best: (name: String, distance: Int)?
        for pattern in catalogue where pattern.segments.count == parts.count {
            let candidate = zip(pattern.segments, parts).map { $0.closest(to: $1) }.joined(separator: ".")
            let distance = editDistance(candidate, metric)
            if best.map({ distance < $0.distance }) ?? true { best = (candidate, distance) }
        }
        guard let best, best.distance <= Swift.max(2, metric.count / 6) else { return nil }
        return best.name
    }

    /// Whether `metric` is a reconciliation metric, which only exists when a server ledger is read.
    static func needsLedger(_ metric: String) -> Bool {
        let parts = metric.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return ReconciliationVerdict.metricPatterns.contains { $0.matches(parts) }
    }

    /// Checks an expression before the run: its syntax, and that its metric fits the naming scheme.
    /// - Returns: `nil` when usable, else the problem in words.
    public static func problem(in expression: String) -> String? {
        switch parse(expression) {
        case .failure(let error):
            return error.description
        case .success(let parsed):
            guard !isKnownMetric(parsed.metric) else { return nil }
            let hint = suggestion(for: parsed.metric).map { " (did you mean \($0)?)" } ?? ""
            return "unknown metric \"\(parsed.metric)\"\(hint)"
        }
    }
}

/// Levenshtein distance between two strings (characters).
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            current[j] = Swift.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
