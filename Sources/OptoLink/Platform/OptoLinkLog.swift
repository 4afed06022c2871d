import Foundation

/// The SDK's internal logging front: builds a message only when a logger is configured.
struct OptoLinkLog: Sendable {
    let logger: (any OptoLinkLogger)?

    var isEnabled: Bool { logger != nil }

    func info(_ message: @autoclosure () -> String) {
        logger?.log(level: .info, message(), error: nil)
    }

    func warning(_ message: @autoclosure () -> String, error: (any Error)? = nil) {
        logger?.log(level: .warning, message(), error: error)
    }

    func error(_ message: @autoclosure () -> String, error: (any Error)? = nil) {
        logger?.log(level: .error, message(), error: error)
    }

    /// A form of the API key that is safe to log: its tier prefix and length, never the secret part.
    static func redacted(apiKey: String) -> String {
        let prefix = apiKey.hasPrefix("opl_sdk_") ? "opl_sdk_" : (apiKey.hasPrefix("opl_") ? "opl_" : "")
        return "\(prefix)…(\(apiKey.count) chars)"
    }
}
