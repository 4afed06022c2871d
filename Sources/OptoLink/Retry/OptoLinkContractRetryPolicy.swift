import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The retry matrix of docs/CONTRACT.md §2, the default ``OptoLinkRetryPolicy``.
///
/// | Failure | repeat-safe (`/match`, `/data`) | telemetry (identity, clear, events) | session |
/// |---|---|---|---|
/// | connection error / timeout | retry, back-off | retry, back-off | stop |
/// | 429 | retry after `N` s | retry after `N` s | stop |
/// | 5xx | retry, back-off | stop (a landed event would double-count) | stop |
/// | other 4xx | stop | stop | stop |
///
/// Back-off is ``OptoLinkBackoff/delay(retryIndex:)``; a 429 whose body carries no
/// parsable `N` falls back to it. The budget (`maxRetries`) is enforced by the SDK's retry
/// loop, not here.
public struct OptoLinkContractRetryPolicy: OptoLinkRetryPolicy {
    /// The contract's policy; it has no settings (the budget is `OptoLinkConfig.maxRetries`).
    public init() {}

    /// Looks `failure` up in the matrix above, in the column of `endpoint.retryClass`.
    ///
    /// - Parameters:
    ///   - failure: how the attempt failed (no response, or a status with the 429's `N`).
    ///   - endpoint: the endpoint the attempt targeted.
    ///   - retryIndex: 0 for the first retry, 1 for the second, …; selects the back-off delay.
    /// - Returns: `.retry(after:)` with `N` seconds for a 429 that names it, else the back-off
    ///   `min(0.5 · 2^retryIndex, 5)` seconds; `.stop` where the matrix says stop.
    public func decide(after failure: OptoLinkAttemptFailure, endpoint: OptoLinkEndpoint, retryIndex: Int)
        -> OptoLinkRetryDecision
    {
        let retryClass = endpoint.retryClass
        if retryClass == .session { return .stop }
        switch failure {
        case .connection:
            return .retry(after: OptoLinkBackoff.delay(retryIndex: retryIndex))
        case .status(429, let retryAfterSeconds):
            if let retryAfterSeconds { return .retry(after: .seconds(max(0, retryAfterSeconds))) }
            return .retry(after: OptoLinkBackoff.delay(retryIndex: retryIndex))
        case .status(let status, _) where (500...599).contains(status):
            return retryClass == .repeatSafe ? .retry(after: OptoLinkBackoff.delay(retryIndex: retryIndex)) : .stop
        case .status:
            return .stop
        }
    }
}
