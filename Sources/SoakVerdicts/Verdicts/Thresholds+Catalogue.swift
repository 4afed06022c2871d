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
    package static let catalogue: [MetricPattern] = SummaryMetrics.patterns + Verdicts.metricPatterns

    /// Whether `metric` fits the naming scheme.
    package static func isKnownMetric(_ metric: String) -> Bool {
        let parts = metric.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return catalogue.contains { $0.matches(parts) }
    }

    /// The pattern `metric` fits, if any.
    static func pattern(of metric: String) -> MetricPattern? {
        let parts = metric.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return catalogue.first { $0.matches(parts) }
    }

    /// Every concrete name the catalogue accepts (a declared bucket's place filled from `parts`,
    /// else `<bucket>`).
    static func concreteNames(like parts: [String]) -> [String] {
        catalogue.flatMap { pattern in
            pattern.segments.enumerated().reduce([""]) { names, element in
                let (position, segment) = element
                let spellings: [String]
                if case .anyName = segment {
                    spellings = [position < parts.count && !parts[position].isEmpty ? parts[position] : "<bucket>"]
                } else {
                    spellings = segment.spellings
                }
                return names.flatMap { name in spellings.map { name.isEmpty ? $0 : name + "." + $0 } }
            }
        }
    }

    /// The valid metric name nearest to `metric`, for "did you mean": among names of the same
    /// first part (endpoint or family) when that part is a real one, those sharing the most parts
    /// with `metric`, then the fewest character edits. `nil` when nothing is reasonably close.
    package static func suggestion(for metric: String) -> String? {
        let parts = metric.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let names = concreteNames(like: parts)
        let firstParts = Set(names.compactMap { $0.split(separator: ".").first.map(String.init) })
        let sameFamily = parts.first.map(firstParts.contains) ?? false
        var best: (name: String, missing: Int, distance: Int)?
        for name in names {
            let candidate = name.split(separator: ".").map(String.init)
            if sameFamily && candidate.first != parts.first { continue }
            let missing = parts.filter { !candidate.contains($0) }.count
            let distance = editDistance(name, metric)
            if let current = best, (current.missing, current.distance) <= (missing, distance) { continue }
            best = (name, missing, distance)
        }
        guard let best else { return nil }
        // Close in spelling, or the same family with every other part found in it.
        let shared = parts.count - best.missing
        guard best.distance <= Swift.max(2, metric.count / 6) || (sameFamily && shared >= 2) else { return nil }
        return best.name
    }

    /// Why the unit written on an expression's right-hand side does not fit its metric, or `nil`.
    static func unitProblem(metric: String, rawValue: String) -> String? {
        guard let unit = pattern(of: metric)?.unit else { return nil }
        let text = rawValue.trimmingCharacters(in: .whitespaces)
        let written = ["ms", "%", "s"].first { suffix in
            text.hasSuffix(suffix)
                && text.dropLast(suffix.count).last.map { $0.isNumber || $0 == " " || $0 == "." } == true
        }
        guard let written else { return nil }
        let what: String
        switch unit {
        case .seconds:
            return written == "%" ? "\(metric) is a duration in seconds: '%' does not apply (write e.g. 250ms)" : nil
        case .ratio:
            if written == "%" { return nil }
            what = "a rate (a fraction 0…1; write e.g. 0.05 or 5%)"
        case .count: what = "a count (write a plain number)"
        case .bytes: what = "a size in bytes (write a plain number)"
        case .perSecond: what = "a rate per second (write a plain number)"
        case .megabytesPerHour: what = "a growth in MiB per hour (write a plain number)"
        }
        let kind = written == "%" ? "a percentage" : "a duration unit"
        return "\(metric) is \(what): \(kind) ('\(text)') does not apply to it"
    }

    /// Whether `metric` is a reconciliation metric, which only exists when a server ledger is read.
    static func needsLedger(_ metric: String) -> Bool {
        let parts = metric.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return ReconciliationVerdict.metricPatterns.contains { $0.matches(parts) }
    }

    /// Checks an expression before the run: its syntax, and that its metric fits the naming scheme.
    /// - Returns: `nil` when usable, else the problem in words.
    package static func problem(in expression: String) -> String? {
        switch parse(expression) {
        case .failure(let error):
            return error.description
        case .success(let parsed):
            guard !isKnownMetric(parsed.metric) else {
                let rawValue = expression.components(separatedBy: parsed.op.rawValue).dropFirst().joined(
                    separator: parsed.op.rawValue)
                return unitProblem(metric: parsed.metric, rawValue: rawValue)
            }
            let hint = suggestion(for: parsed.metric).map { " (did you mean \($0)?)" } ?? ""
            return "unknown metric \"\(parsed.metric)\"\(hint)"
        }
    }
}

extension Thresholds {
    /// Why an expression's `limits.<bucket>.<stat>` names a bucket the profile does not declare in
    /// `expect.limits` (such a metric would only be "not available" after the whole run), with the
    /// nearest declared bucket; `nil` when it is declared, not such a metric, or nothing is declared.
    package static func bucketProblem(in expression: String, declared: Set<String>) -> String? {
        guard !declared.isEmpty else { return nil }
        return nameProblem(
            in: expression, family: "limits", parts: 3...3, noun: "bucket", declared: declared,
            declaredBy: "expect.limits declares")
    }

    /// Why an expression's `journey.<name>.*` names a journey the profile does not declare, with
    /// the nearest declared name; `nil` when it is declared or not such a metric.
    package static func journeyProblem(in expression: String, declared: Set<String>) -> String? {
        nameProblem(
            in: expression, family: "journey", parts: 3...4, noun: "journey", declared: declared,
            declaredBy: "the profile's journeys are")
    }

    /// Why an expression's `opens.*` metric cannot exist in a run of this profile: no journey has
    /// an `open` step, so no open is ever measured; `nil` otherwise.
    package static func opensProblem(in expression: String, journeysWithOpen: Set<String>) -> String? {
        guard journeysWithOpen.isEmpty, case .success(let parsed) = parse(expression),
            parsed.metric.hasPrefix("opens.")
        else { return nil }
        return "\(parsed.metric) measures open steps, and no journey of this profile has one "
            + "(add {\"kind\": \"open\", …} to a journey's steps, or remove the threshold)"
    }

    /// Why `<family>.<name>.…` names something `declared` does not hold, with the nearest declared
    /// name put in its place.
    private static func nameProblem(
        in expression: String, family: String, parts count: ClosedRange<Int>, noun: String, declared: Set<String>,
        declaredBy: String
    ) -> String? {
        guard case .success(let parsed) = parse(expression) else { return nil }
        let parts = parsed.metric.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard count.contains(parts.count), parts[0] == family, !declared.contains(parts[1]) else { return nil }
        let nearest = declared.sorted().min { editDistance($0, parts[1]) < editDistance($1, parts[1]) }
        let hint = nearest.map { name in
            " (did you mean \(([family, name] + parts.dropFirst(2)).joined(separator: "."))?)"
        }
        return "unknown \(noun) \"\(parts[1])\" in \(parsed.metric)\(hint ?? ""): \(declaredBy) "
            + (declared.isEmpty ? "none" : declared.sorted().joined(separator: ", "))
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
