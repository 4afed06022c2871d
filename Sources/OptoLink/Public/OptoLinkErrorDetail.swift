import Foundation

/// One entry of the error envelope's `details` array (400 validation failures only).
public struct OptoLinkErrorDetail: Sendable, Codable, Equatable {
    /// What failed, e.g. `properties must be at most 10240 bytes`.
    public let message: String
    /// The offending request field, when the backend names one.
    public let field: String?

    /// A detail as the backend's 400 envelope carries it (docs/CONTRACT.md §1, "Error envelope").
    ///
    /// - Parameters:
    ///   - message: what failed, in the backend's words.
    ///   - field: the request field at fault, or `nil`.
    public init(message: String, field: String? = nil) {
        self.message = message
        self.field = field
    }
}
