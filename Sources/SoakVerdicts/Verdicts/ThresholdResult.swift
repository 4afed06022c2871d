/// The outcome of one threshold expression.
public struct ThresholdResult: Sendable, Codable, Equatable {
    /// The expression as written in the profile.
    public var expression: String
    /// The metric it names, or `nil` when the expression could not be parsed.
    public var metric: String?
    /// The metric's value (seconds for latencies), or `nil` when unavailable.
    public var observed: Double?
    /// The right-hand side converted to the metric's unit (seconds for `ms`/`s`), or `nil`.
    public var limit: Double?
    /// Whether the threshold held (a "not exercised" metric fails unless ``optional``).
    public var passed: Bool
    /// Why it failed when the metric is missing or the expression malformed; `nil` otherwise.
    public var message: String?
    /// Why the metric's verdict judged nothing, when it did not (then the value proves nothing).
    public var notExercised: String?
    /// The profile marked it optional: "not exercised" does not fail it.
    public var optional: Bool?

    package init(
        expression: String, metric: String?, observed: Double?, limit: Double?, passed: Bool, message: String?
    ) {
        self.expression = expression
        self.metric = metric
        self.observed = observed
        self.limit = limit
        self.passed = passed
        self.message = message
    }

    /// One console line: `PASS match.call_latency.p95 < 250ms (observed 3.2ms)`, the observed
    /// value in the unit the expression wrote its limit in.
    public var line: String {
        if let notExercised {
            return optional == true
                ? "SKIP \(expression) (not exercised, optional: \(notExercised))"
                : "FAIL \(expression) (not exercised: \(notExercised); mark it optional if that is expected)"
        }
        let mark = passed ? "PASS" : "FAIL"
        if let observed { return "\(mark) \(expression) (observed \(Thresholds.display(observed, like: expression)))" }
        return "\(mark) \(expression) (\(message ?? "no value"))"
    }

    package static func format(_ value: Double, significant: Int = 6) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(format: "%.\(significant)g", value)
    }
}
