import Foundation

/// One `expect.regression` rule: a k6-style threshold whose right-hand side may use `baseline`,
/// the same metric's value in the baseline run.
///
/// Shape: `<metric> <op> <expression>`, `op` one of `<`, `<=`, `>`, `>=`, `==`, `!=`; the
/// expression is numbers (optionally `ms`, `s` or `%`, as in thresholds), `baseline`, `+ - * /`
/// and parentheses: `"match.call_latency.p95 < baseline * 1.10"`,
/// `"events.429.rate <= baseline + 0.01"`, `"backoff.early == 0"` (no `baseline`: a plain
/// threshold on the current run). Latencies are seconds, so `baseline + 5ms` adds 0.005.
package struct RegressionRule: Sendable, Equatable {
    /// The rule as written.
    package var expression: String
    package var metric: String
    let op: Thresholds.Operator
    let rhs: Term

    /// An arithmetic expression over numbers and `baseline`.
    indirect enum Term: Sendable, Equatable {
        case number(Double)
        case baseline
        case negate(Term)
        case binary(Character, Term, Term)

        var usesBaseline: Bool {
            switch self {
            case .number: false
            case .baseline: true
            case .negate(let t): t.usesBaseline
            case .binary(_, let l, let r): l.usesBaseline || r.usesBaseline
            }
        }

        func value(baseline: Double?) -> Double? {
            switch self {
            case .number(let v): return v
            case .baseline: return baseline
            case .negate(let t): return t.value(baseline: baseline).map { -$0 }
            case .binary(let op, let l, let r):
                guard let a = l.value(baseline: baseline), let b = r.value(baseline: baseline) else { return nil }
                switch op {
                case "+": return a + b
                case "-": return a - b
                case "*": return a * b
                default: return a / b
                }
            }
        }
    }

    /// Whether the right-hand side refers to the baseline run.
    package var usesBaseline: Bool { rhs.usesBaseline }

    /// Parses a rule and checks its metric name against the run's metric scheme.
    /// - Throws: ``RegressionRuleError`` with the problem in words (`expect.regression[i]` is
    ///   added by the profile decoder).
    package init(_ expression: String) throws {
        let text = expression.trimmingCharacters(in: .whitespaces)
        var found: (Thresholds.Operator, Range<String.Index>)?
        for op in Thresholds.Operator.allCases {
            if let range = text.range(of: op.rawValue), found.map({ range.lowerBound < $0.1.lowerBound }) ?? true {
                found = (op, range)
            }
        }
        let shape = "expected '<metric> <op> <expression>', e.g. 'match.call_latency.p95 < baseline * 1.10'"
        guard let (op, range) = found else { throw RegressionRuleError("no operator: \(shape)") }
        let metric = text[..<range.lowerBound].trimmingCharacters(in: .whitespaces)
        if let problem = Thresholds.problem(in: "\(metric) == 0") { throw RegressionRuleError(problem) }
        var parser = Parser(text: String(text[range.upperBound...]))
        let rhs = try parser.parseAll()
        self.expression = expression
        self.metric = metric
        self.op = op
        self.rhs = rhs
    }

    /// The rule's outcome for one pair of metric values.
    package func evaluate(baseline: [String: Double], current: [String: Double]) -> RegressionCheck {
        var check = RegressionCheck(
            name: expression, metric: metric, baseline: baseline[metric], current: current[metric], limit: nil,
            passed: false, message: nil)
        guard let observed = current[metric], observed.isFinite else {
            check.message = "metric '\(metric)' not available in the current run"
            return check
        }
        if usesBaseline && baseline[metric]?.isFinite != true {
            check.message = "metric '\(metric)' not available in the baseline run"
            return check
        }
        guard let limit = rhs.value(baseline: baseline[metric]), limit.isFinite else {
            check.message = "the right-hand side has no finite value (division by zero?)"
            return check
        }
        check.limit = limit
        check.passed = op.holds(observed, limit)
        return check
    }

    /// Recursive-descent parser: sum := product (('+'|'-') product)*; product := unary (('*'|'/') unary)*;
    /// unary := '-' unary | atom; atom := number[unit] | 'baseline' | '(' sum ')'.
    struct Parser {
        let characters: [Character]
        var index = 0

        init(text: String) { characters = Array(text) }

        /// The longest right-hand side, in characters: parsing and evaluation recurse, so a very
        /// long or deeply nested rule (100,000 `(`) would overflow the stack instead of failing.
        static let longestText = 256

        mutating func parseAll() throws -> Term {
            guard characters.count <= Self.longestText else {
                throw RegressionRuleError("the right-hand side is longer than \(Self.longestText) characters")
            }
            let term = try sum()
            skipSpaces()
            guard index == characters.count else {
                throw RegressionRuleError("unexpected '\(String(characters[index...]))' in the right-hand side")
            }
            return term
        }

        mutating func skipSpaces() {
            while index < characters.count, characters[index] == " " { index += 1 }
        }

        mutating func peek() -> Character? {
            skipSpaces()
            return index < characters.count ? characters[index] : nil
        }

        mutating func sum() throws -> Term {
            var left = try product()
            while let op = peek(), op == "+" || op == "-" {
                index += 1
                left = .binary(op, left, try product())
            }
            return left
        }

        mutating func product() throws -> Term {
            var left = try unary()
            while let op = peek(), op == "*" || op == "/" {
                index += 1
                left = .binary(op, left, try unary())
            }
            return left
        }

        mutating func unary() throws -> Term {
            if peek() == "-" {
                index += 1
                return .negate(try unary())
            }
            return try atom()
        }

        mutating func atom() throws -> Term {
            guard let first = peek() else { throw RegressionRuleError("the right-hand side ends too early") }
            if first == "(" {
                index += 1
                let inner = try sum()
                guard peek() == ")" else { throw RegressionRuleError("missing ')' in the right-hand side") }
                index += 1
                return inner
            }
            var word = ""
            while index < characters.count,
                characters[index].isLetter || characters[index].isNumber
                    || characters[index] == "." || characters[index] == "%" || characters[index] == "_"
            {
                word.append(characters[index])
                index += 1
            }
            if word == "baseline" { return .baseline }
            guard !word.isEmpty, let value = Thresholds.parseValue(word) else {
                throw RegressionRuleError(
                    "bad term '\(word.isEmpty ? String(first) : word)': use numbers (with ms, s or %), "
                        + "'baseline', + - * / and parentheses")
            }
            return .number(value)
        }
    }
}

/// Why a regression rule cannot be used.
package struct RegressionRuleError: Error, Sendable, Equatable, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}

/// The outcome of one regression check (a rule, a latency shift or a verdict count).
package struct RegressionCheck: Sendable, Codable, Equatable {
    /// The rule as written, or `<endpoint>.<kind>` / the verdict metric for the default rule.
    package var name: String
    package var metric: String
    package var baseline: Double?
    package var current: Double?
    /// The right-hand side's value for a rule (seconds for latencies); `nil` for default checks.
    package var limit: Double?
    package var passed: Bool
    /// Why it failed or could not be judged, in words; `nil` when it passed cleanly.
    package var message: String?
    /// A latency shift the default rule would flag, made inconclusive by a busier machine.
    package var inconclusive: Bool? = nil
}
