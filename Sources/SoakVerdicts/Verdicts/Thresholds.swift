import Foundation

/// k6-style pass/fail thresholds over the run's flat metrics.
///
/// An expression is `<metric> <op> <value>[unit]` with `op` one of `<`, `<=`, `>`, `>=`, `==`,
/// `!=`; `unit` is `ms` or `s` (converted to seconds: latency metrics are in seconds) or `%`
/// (divided by 100). Examples: `"match.call_latency.p95 < 250ms"`, `"backoff.early == 0"`,
/// `"http.errors.rate < 1%"`. A malformed expression or a metric that is not available is a
/// failed result with a message — never a crash.
package enum Thresholds {
    /// The comparison operators, longest spelling first so `<=` wins over `<`.
    enum Operator: String, CaseIterable {
        case lessOrEqual = "<="
        case greaterOrEqual = ">="
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case greater = ">"

        func holds(_ lhs: Double, _ rhs: Double) -> Bool {
            let epsilon = 1e-9 * max(1, abs(lhs), abs(rhs))
            switch self {
            case .lessOrEqual: return lhs <= rhs + epsilon
            case .greaterOrEqual: return lhs >= rhs - epsilon
            case .equal: return abs(lhs - rhs) <= epsilon
            case .notEqual: return abs(lhs - rhs) > epsilon
            case .less: return lhs < rhs
            case .greater: return lhs > rhs
            }
        }
    }

    /// Evaluates each expression against `metrics`, in order.
    package static func evaluate(_ expressions: [String], metrics: [String: Double]) -> [ThresholdResult] {
        expressions.map { evaluate($0, metrics: metrics) }
    }

    /// Evaluates each threshold against `metrics`, in order. A threshold whose metric lies under a
    /// prefix of `notExercised` (metric-name prefix → why nothing was judged there) is
    /// "not exercised": failed, unless the threshold is optional.
    package static func evaluate(
        _ specs: [ThresholdSpec], metrics: [String: Double], notExercised: [String: String]
    ) -> [ThresholdResult] {
        specs.map { spec in
            var result = evaluate(spec.expression, metrics: metrics)
            guard let metric = result.metric, let reason = notExercisedReason(metric, in: notExercised) else {
                return result
            }
            result.notExercised = reason
            result.optional = spec.optional
            result.passed = spec.optional
            return result
        }
    }

    /// The reason of the longest `notExercised` prefix (whole `.`-separated parts) of `metric`.
    static func notExercisedReason(_ metric: String, in notExercised: [String: String]) -> String? {
        guard !notExercised.isEmpty else { return nil }
        var parts = metric.split(separator: ".", omittingEmptySubsequences: false)
        while !parts.isEmpty {
            if let reason = notExercised[parts.joined(separator: ".")] { return reason }
            parts.removeLast()
        }
        return nil
    }

    package static func evaluate(_ expression: String, metrics: [String: Double]) -> ThresholdResult {
        let parsed: (metric: String, op: Operator, value: Double)
        switch parse(expression) {
        case .success(let value): parsed = value
        case .failure(let error):
            return ThresholdResult(
                expression: expression, metric: nil, observed: nil, limit: nil, passed: false,
                message: error.description)
        }
        guard let observed = metrics[parsed.metric] else {
            return ThresholdResult(
                expression: expression, metric: parsed.metric, observed: nil, limit: parsed.value, passed: false,
                message: needsLedger(parsed.metric)
                    ? "metric '\(parsed.metric)' not available in this run: it needs the server ledger (embedded emulator, or --ledger FILE with --base-url)"
                    : "metric '\(parsed.metric)' not available in this run")
        }
        guard observed.isFinite else {
            return ThresholdResult(
                expression: expression, metric: parsed.metric, observed: nil, limit: parsed.value, passed: false,
                message: "metric '\(parsed.metric)' has no finite value")
        }
        return ThresholdResult(
            expression: expression, metric: parsed.metric, observed: observed, limit: parsed.value,
            passed: parsed.op.holds(observed, parsed.value), message: nil)
    }

    /// Why an expression could not be parsed.
    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    static func parse(_ expression: String) -> Result<(metric: String, op: Operator, value: Double), ParseError> {
        let text = expression.trimmingCharacters(in: .whitespaces)
        let shape = "expected '<metric> <op> <value>' with op one of < <= > >= == !=, e.g. 'backoff.early == 0'"
        var found: (Operator, Range<String.Index>)?
        for op in Operator.allCases {
            if let range = text.range(of: op.rawValue), found.map({ range.lowerBound < $0.1.lowerBound }) ?? true {
                found = (op, range)
            }
        }
        guard let (op, range) = found else { return .failure(ParseError(description: "no operator: \(shape)")) }
        let metric = text[..<range.lowerBound].trimmingCharacters(in: .whitespaces)
        let rawValue = text[range.upperBound...].trimmingCharacters(in: .whitespaces)
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "._-[]()"))
        guard !metric.isEmpty, metric.unicodeScalars.allSatisfy({ allowed.contains($0) }) else {
            return .failure(ParseError(description: "bad metric name '\(metric)': \(shape)"))
        }
        guard let value = parseValue(rawValue) else {
            return .failure(
                ParseError(description: "bad value '\(rawValue)': a number, optionally with ms, s or %"))
        }
        return .success((metric, op, value))
    }

    /// `observed` in the unit of `expression`'s right-hand side: `0.0032` with `"… < 250ms"` →
    /// `"3.2ms"`, with `"… < 1s"` → `"0.0032s"`, with `"… < 1%"` → `"0.32%"`; no unit → the plain number.
    package static func display(_ observed: Double, like expression: String) -> String {
        let text = expression.trimmingCharacters(in: .whitespaces)
        for (suffix, factor) in [("ms", 1000.0), ("%", 100.0), ("s", 1.0)] where text.hasSuffix(suffix) {
            let number = text.dropLast(suffix.count).last
            guard number?.isNumber == true || number == " " || number == "." else { continue }
            return ThresholdResult.format(observed * factor, significant: 4) + suffix
        }
        return ThresholdResult.format(observed)
    }

    /// `"250ms"` → 0.25, `"1.5s"` → 1.5, `"1%"` → 0.01, `"3"` → 3.
    package static func parseValue(_ text: String) -> Double? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("%", 0.01)]
        var number = Substring(text)
        var factor = 1.0
        for (suffix, unitFactor) in units where text.hasSuffix(suffix) {
            number = text.dropLast(suffix.count)
            factor = unitFactor
            break
        }
        let trimmed = number.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, let value = Double(trimmed), value.isFinite else { return nil }
        return value * factor
    }
}
