import Foundation

/// Receives the SDK's log lines. Called from any task; implementations must be thread-safe.
///
/// `info` carries the decision trail (flag state, collected match legs, retry decisions),
/// `warning` and `error` the failures. The API key never appears whole (docs/CONTRACT.md §2).
public protocol OptoLinkLogger: Sendable {
    /// Receives one log line.
    ///
    /// - Parameters:
    ///   - level: `info` for decisions, `warning`/`error` for failures.
    ///   - message: one line of text, API key masked.
    ///   - error: the failure behind a `warning` or `error` line, if any.
    func log(level: OptoLinkLogLevel, _ message: String, error: (any Error)?)
}

/// Severity of an SDK log line.
public enum OptoLinkLogLevel: Sendable {
    /// The decision trail: flag state, match legs collected, retry decisions.
    case info
    /// A failure the SDK recovered from or logged instead of throwing (e.g. `/sdk/session`).
    case warning
    /// A failure surfaced to the caller.
    case error
}
