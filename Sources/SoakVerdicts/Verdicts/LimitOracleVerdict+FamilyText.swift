extension LimitOracleVerdict.Bucket {
    /// What the report says about the limiter family the server showed (empty for a summary
    /// written before families were fitted), e.g. `family fixed_window_clock (declared
    /// fixed_window does not fit)`.
    package func familyText(declaredFamily: LimiterFamily) -> String {
        guard !familyScores.isEmpty else { return "" }
        guard let family else {
            let closest = familyScores.min { ($0.mismatches, $0.wrongN) < ($1.mismatches, $1.wrongN) }
            let detail = closest.map { ", closest \($0.family.rawValue) misses \($0.mismatches) of \($0.judged)" } ?? ""
            return "no limiter family explains the answers\(detail); judged as \(declaredFamily.rawValue)"
        }
        var text = "family \(family.rawValue)"
        if let familyLimit { text += " with \(familyLimit) per window, not \(declared.limit)" }
        let others = familiesFitting.filter { $0 != family }
        if !others.isEmpty { text += " (also fit: \(others.map(\.rawValue).joined(separator: ", ")))" }
        if family != declaredFamily && !familiesFitting.contains(declaredFamily) {
            text += " (declared \(declaredFamily.rawValue) does not fit)"
        }
        if family.burstsAtEdges && reachedLimit {
            text += "; up to 2×\(declared.limit) across a window edge is this family's, not a breach"
        }
        return text
    }

    /// The key mismatch line, or `nil`.
    package var keyMismatchText: String? {
        guard let keyMismatch else { return nil }
        return "key mismatch: declared per \(keyMismatch.declared.rawValue), the answers fit per "
            + "\(keyMismatch.fitting.rawValue) (\(keyMismatch.family.rawValue)); \(keyMismatch.cause) — under the "
            + "declared key \(keyMismatch.declaredTooStrict) too strict, \(keyMismatch.declaredTooLenient) too "
            + "lenient, not counted as breaches"
    }
}

extension LimitOracleVerdict.Bucket {
    /// The headline's word on a key mismatch, or `nil`.
    package var keyMismatchHeadline: String? {
        keyMismatch.map { "key mismatch (the answers fit per \($0.fitting.rawValue): \($0.cause))" }
    }

    /// The headline's word on the family when it is not the declared one (` as <family>`), else empty.
    package func familyHeadline(declaredFamily: LimiterFamily) -> String {
        guard let family, family != declaredFamily else { return "" }
        return " as \(family.rawValue)" + (familyLimit.map { " of \($0)" } ?? "")
    }
}
