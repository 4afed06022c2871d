import Foundation

/// The SDK's version, sent as `X-OptoLink-SDK: ios/<version>` and in `/sdk/session`.
public enum OptoLinkVersion {
    /// Semantic version of this SDK build.
    public static let current = "0.1.0"
    /// The audit header value, `ios/<version>`.
    public static var auditHeader: String { "ios/\(current)" }
}
