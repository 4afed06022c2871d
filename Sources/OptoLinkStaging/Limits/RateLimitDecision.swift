/// What the limiter says about one hit.
package enum RateLimitDecision: Sendable, Equatable {
    case allowed
    /// Rejected; the window frees in `retryAfterSeconds` whole seconds (≥ 1, rounded up).
    case limited(retryAfterSeconds: Int)

    /// The 429 message of docs/CONTRACT.md §1: `Retry after 1 second.` / `Retry after N seconds.`
    static func message(retryAfterSeconds n: Int) -> String {
        n == 1 ? "Rate limit exceeded. Retry after 1 second." : "Rate limit exceeded. Retry after \(n) seconds."
    }
}
