import Foundation

/// The metric naming scheme (`Reports/README.md`, `Profiles/verdicts/README.md`) as patterns, so a
/// profile's thresholds can be checked before the run: a malformed expression or a metric name
/// that no run could ever produce is a profile error, not a failed threshold an hour later.
///
/// A name that fits a pattern may still be missing after the run (no `/match` call was made, no
/// ledger was given): that stays a failed threshold "not available in this run".
extension Thresholds {
    /// One segment of a metric pattern: a literal, one of a closed set, or any name (a declared
    /// limit bucket).
    enum Segment: Sendable {
        case literal(String)
        case oneOf([String])
        case anyName

        func matches(_ text: String) -> Bool {
            switch self {
            case .literal(let value): return value == text
            case .oneOf(let values): return values.contains(text)
            case .anyName: return !text.isEmpty
            }
        }

        /// The spelling of this segment closest to `text` (for "did you mean").
        func closest(to text: String) -> String {
            switch self {
            case .literal(let value): return value
            case .oneOf(let values): return values.min { editDistance($0, text) < editDistance($1, text) } ?? text
            case .anyName: return text
            }
        }
    }

    static let endpoints = ["match", "data", "session", "identity", "identity_clear", "events"]
    static let statistics = ["p50", "p90", "p95", "p99", "p999", "max", "mean", "min"]
    static let distribution = ["min", "p50", "p90", "p99", "max"]
    static let outcomes = ["ok", "api_error", "connection_error", "other_error", "unfinished"]
    static let methods = ["CLIPBOARD", "FINGERPRINT_EXACT", "FINGERPRINT_SCORED", "IP_FUZZY", "NONE"]
    static let attributionCounts = [
        "devices", "correct", "wrong_link", "missed", "false_positive", "organic", "correct_rate", "precision",
    ]
    static let limitCounts = [
        "accepted", "rejected", "uncertain", "windows", "too_lenient", "too_strict", "wrong_message", "wrong_n",
        "ambiguous", "exact",
    ]
    static let reconcileCounts = [
        "delivered_once", "duplicated", "duplicate_writes", "lost", "landed_unknown", "not_delivered", "unexpected",
    ]
    static let backoffCounts = ["checked", "early", "on_time", "late"]
    static let retryKinds = [
        "retried_5xx_telemetry", "retried_session", "retried_4xx", "retried_success", "over_budget", "missing_retry",
    ]

    /// Every metric name a run can produce, as patterns (`.` separates segments).
    static let catalogue: [[Segment]] = {
        func p(_ parts: Any...) -> [Segment] {
            parts.map { part in
                if let text = part as? String { return .literal(text) }
                if let set = part as? [String] { return .oneOf(set) }
                return .anyName  // `AnyName()`: a declared limit bucket's name
            }
        }
        let any = AnyName()
        var patterns: [[Segment]] = [
            p("http", ["requests", "calls", "errors", "429", "requests_per_second"]),
            p("http", ["errors", "429"], "rate"),
            p(endpoints, ["attempts", "calls", "errors", "429"]),
            p(endpoints, ["errors", "429"], "rate"),
            p(endpoints, "calls", outcomes),
            p(endpoints, ["attempt_latency", "latency_from_intended", "call_latency"], statistics),
            p("journeys", ["started", "completed", "unfinished", "late_starts"]),
            p("journeys", "start_lag", statistics),
            p("deferred", ["first_launches", "matched", "match_rate"] + methods),
            p("clicks", ["count", "clipboard_placed", "errors"]),
            p("opens", ["count", "timed_out"]),
            p("opens", "latency", statistics),
            p("rss", "max_bytes"),
            p("backoff", backoffCounts),
            p("backoff", ["429", "exponential"], backoffCounts),
            p("backoff", "429", "without_n"),
            p("backoff", "gap_excess", distribution),
            p("retry", ["calls", "violations", "cut_short", "inconsistent_calls", "retried_calls"]),
            p("retry", "violations", retryKinds),
            p("retry", endpoints, "violations"),
            p("retry", "attempts_per_call", "max"),
            p(endpoints, reconcileCounts),
            p("reconcile", ["duplicated", "lost"]),
            p("limits", ["too_lenient", "too_strict", "wrong_message", "wrong_n", "ambiguous", "declaration_errors"]),
            p("limits", any, limitCounts),
            p("attribution", attributionCounts),
            p("attribution", ["shared_nat", "own_ip"], attributionCounts),
            p("attribution", "method", methods, attributionCounts),
            p("verdicts", "ignored_attempts"),
        ]
        patterns.sort { $0.count < $1.count }
        return patterns
    }()

    /// Whether `metric` fits the naming scheme.
    static func isKnownMetric(_ metric: String) -> Bool {
        let parts = metric.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return catalogue.contains { pattern in
            pattern.count == parts.count && zip(pattern, parts).allSatisfy { $0.matches($1) }
        }
    }

    /// The known metric name closest to `metric` (at most a few edits away), for "did you mean".
    static func suggestion(for metric: String) -> String? {
        let parts = metric.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var best: (name: String, distance: Int)?
        for pattern in catalogue where pattern.count == parts.count {
            let candidate = zip(pattern, parts).map { $0.closest(to: $1) }.joined(separator: ".")
            let distance = editDistance(candidate, metric)
            if best.map({ distance < $0.distance }) ?? true { best = (candidate, distance) }
        }
        guard let best, best.distance <= Swift.max(2, metric.count / 6) else { return nil }
        return best.name
    }

    /// Whether `metric` is a reconciliation metric, which only exists when a server ledger is read.
    static func needsLedger(_ metric: String) -> Bool {
        let parts = metric.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 else { return false }
        return parts[0] == "reconcile" || (endpoints.contains(parts[0]) && reconcileCounts.contains(parts[1]))
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

/// Marks a catalogue segment that takes any name.
private struct AnyName {}

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
