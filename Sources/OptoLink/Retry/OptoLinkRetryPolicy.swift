import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How one attempt failed, as the retry policy sees it.
public enum OptoLinkAttemptFailure: Sendable, Equatable {
    /// No HTTP response arrived (refused, reset, timed out).
    case connection(URLError.Code)
    /// A non-2xx response; `retryAfterSeconds` is the `N` parsed from a 429 body.
    case status(Int, retryAfterSeconds: Int?)
}

/// What to do after a failed attempt.
public enum OptoLinkRetryDecision: Sendable, Equatable {
    /// Sleep this long on the injected clock (``OptoLinkEnvironment/clock``), then try again.
    case retry(after: OptoLinkDuration)
    /// Stop and surface the failure (throw, or log for `/sdk/session`).
    case stop
}

/// Decides whether a failed attempt is retried and after how long.
///
/// The SDK consults it after every failed attempt while budget remains; the default is
/// ``OptoLinkContractRetryPolicy`` (docs/CONTRACT.md §2, "Retry matrix"). Other policies exist
/// for tests that need a misbehaving client.
public protocol OptoLinkRetryPolicy: Sendable {
    /// Decides what follows one failed attempt.
    ///
    /// - Parameters:
    ///   - failure: how the attempt failed.
    ///   - endpoint: which endpoint it targeted (its `retryClass` selects the matrix column).
    ///   - retryIndex: `n` in `min(0.5 · 2ⁿ, 5)`: 0 when deciding the first retry.
    /// - Returns: `.stop` when the matrix forbids a retry; the SDK itself stops once
    ///   `maxRetries` retries are spent, whatever the policy says.
    func decide(after failure: OptoLinkAttemptFailure, endpoint: OptoLinkEndpoint, retryIndex: Int)
        -> OptoLinkRetryDecision
}
