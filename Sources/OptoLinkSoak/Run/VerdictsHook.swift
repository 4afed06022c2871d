import OptoLinkStaging

// HOOK (verdicts): until the verdicts work lands on its branch, this file stands in for
// `Verdicts.evaluate` and `Thresholds.evaluate`. When it lands, `evaluateVerdicts` calls
// `Verdicts.evaluate(VerdictInputs(...))` and `evaluateThresholds` calls
// `Thresholds.evaluate(_:metrics:)`; nothing else in the run changes.

/// The run's judgement step: verdicts over the recorded rows plus threshold evaluation.
enum VerdictsHook {
    /// Inputs the verdicts need (the recorder's rows read back from the CSVs, the ledger).
    struct Inputs {
        var attempts: [AttemptRecord]
        var calls: [CallRecord]
        var ledger: [StagingLedgerEntry]?
        var attribution: [AttributionRecord]
        var configuration: VerdictsConfiguration
        var maxRetries: Int
        var runStartEpoch: Double
    }

    /// Returns the verdicts' report (as JSON for `summary.json`) and their metrics.
    static func evaluateVerdicts(_ inputs: Inputs) -> (report: JSONValue?, metrics: [String: Double]) {
        (nil, [:])
    }

    /// Evaluates `metric op value[ms|s|%]` expressions (`<`, `<=`, `>`, `>=`, `==`, `!=`).
    static func evaluateThresholds(_ expressions: [String], metrics: [String: Double]) -> [SoakSummary.ThresholdOutcome]
    {
        expressions.map { expression in
            let parts = expression.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard parts.count == 3 else {
                return .init(expression: expression, observed: nil, passed: false, message: "expected `metric op value`")
            }
            var valueText = parts[2]
            var scale = 1.0
            if valueText.hasSuffix("ms") {
                scale = 0.001
                valueText.removeLast(2)
            } else if valueText.hasSuffix("s") {
                valueText.removeLast()
            } else if valueText.hasSuffix("%") {
                scale = 0.01
                valueText.removeLast()
            }
            guard let limit = Double(valueText).map({ $0 * scale }) else {
                return .init(expression: expression, observed: nil, passed: false, message: "bad value \(parts[2])")
            }
            guard let observed = metrics[parts[0]] else {
                return .init(expression: expression, observed: nil, passed: false, message: "unknown metric \(parts[0])")
            }
            let passed: Bool? =
                switch parts[1] {
                case "<": observed < limit
                case "<=": observed <= limit
                case ">": observed > limit
                case ">=": observed >= limit
                case "==": observed == limit
                case "!=": observed != limit
                default: nil
                }
            guard let passed else {
                return .init(expression: expression, observed: observed, passed: false, message: "bad operator \(parts[1])")
            }
            return .init(expression: expression, observed: observed, passed: passed, message: nil)
        }
    }
}
