import Foundation

/// Receives the SDK's log lines. Called from any task; implementations must be thread-safe.
///
/// `info` carries the decision trail (flag state, collected match legs, retry decisions),
/// `warning` and `error` the failures. The API key never appears whole (docs/CONTRACT.md §2).
public protocol OptoLinkLogger: Sendable {
    func log(level: OptoLinkLogLevel, _ message: String, error: (any Error)?)
}

/// Severity of an SDK log line.
public enum OptoLinkLogLevel: Sendable {
    case info, warning, error
}
