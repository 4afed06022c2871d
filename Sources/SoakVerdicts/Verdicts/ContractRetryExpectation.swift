import SoakRecords

/// The retry matrix and back-off table of docs/CONTRACT.md §2, re-derived here from the contract
/// text so the audit never reuses the SDK code it audits.
///
/// | Failure | match, data | identity, clear, events | session |
/// |---|---|---|---|
/// | no response (connection error, timeout) | retry | retry | never |
/// | 429 | retry after N s | retry after N s | never |
/// | 5xx | retry | never | never |
/// | other 4xx | never | never | never |
///
/// Back-off before retry `n` (0 = first retry): a 429's parsed `N` seconds, otherwise
/// `min(0.5 · 2ⁿ, 5)` seconds.
package enum ContractRetryExpectation {
    /// The matrix column of an endpoint.
    package enum Column: String {
        case repeatSafe = "repeat_safe"
        case telemetry
        case session
    }

    /// How an attempt ended, in the matrix's rows.
    package enum Outcome: Equatable {
        case success
        /// No response; `kind` is the recorder's error kind.
        case noResponse(kind: AttemptErrorKind?)
        case rateLimited(retryAfterSeconds: Int?)
        case serverError(Int)
        case clientError(Int)
        /// Anything else (1xx/3xx): never retried.
        case other(Int)

        init(_ attempt: AttemptRecord) {
            guard let status = attempt.status else {
                self = .noResponse(kind: attempt.errorKind)
                return
            }
            switch status {
            case 200..<300: self = .success
            case 429: self = .rateLimited(retryAfterSeconds: attempt.retryAfterSeconds)
            case 500..<600: self = .serverError(status)
            case 400..<500: self = .clientError(status)
            default: self = .other(status)
            }
        }

        /// A client-side cancellation (the run stopping) ends a call without a retry legitimately.
        var isCancellation: Bool {
            if case .noResponse(let kind?) = self { return kind.isCancellation }
            return false
        }
    }

    package static func column(of endpoint: ContractEndpoint) -> Column {
        switch endpoint {
        case .match, .data: .repeatSafe
        case .identity, .identityClear, .events: .telemetry
        case .session: .session
        }
    }

    /// Whether the matrix requires a retry (budget permitting) after this outcome.
    static func requiresRetry(after outcome: Outcome, endpoint: ContractEndpoint) -> Bool {
        let column = column(of: endpoint)
        if column == .session { return false }
        switch outcome {
        case .noResponse: return !outcome.isCancellation
        case .rateLimited: return true
        case .serverError: return column == .repeatSafe
        case .success, .clientError, .other: return false
        }
    }

    /// The contract's back-off before retry `retryIndex` (0 = first retry), seconds.
    static func expectedBackoff(after outcome: Outcome, retryIndex: Int) -> Double {
        if case .rateLimited(let n?) = outcome { return Double(n) }
        return exponentialBackoff(retryIndex: retryIndex)
    }

    /// `min(0.5 · 2ⁿ, 5)` seconds.
    package static func exponentialBackoff(retryIndex: Int) -> Double {
        guard retryIndex < 10 else { return 5 }
        return min(0.5 * Double(1 << max(0, retryIndex)), 5)
    }
}
