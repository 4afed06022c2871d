import Foundation

/// The backend answered with a non-2xx status (docs/CONTRACT.md §1, "Error envelope").
///
/// The envelope's fields are lifted onto the error; `raw` always keeps the body verbatim,
/// also when it is not JSON (a proxy's HTML 502) or empty.
public struct OptoLinkApiError: OptoLinkError, LocalizedError, Equatable {
    /// The HTTP status code.
    public let status: Int
    /// The envelope's `requestId`, when present (it only echoes a client-sent `x-request-id`).
    public let requestId: String?
    /// The envelope's `details`; parsed on 400 only, `nil` on every other status.
    public let details: [OptoLinkErrorDetail]?
    /// The `N` of `Retry after N second(s)` in a 429 message; `nil` on every other status.
    public let retryAfterSeconds: Int?
    /// The full response body as text, verbatim (`""` for an empty body).
    public let raw: String?
    /// The envelope's `message`, or `nil` when the body is not an envelope (additive).
    public let message: String?

    /// Memberwise initialiser (additive API, for tests and adapters).
    public init(
        status: Int,
        requestId: String? = nil,
        details: [OptoLinkErrorDetail]? = nil,
        retryAfterSeconds: Int? = nil,
        raw: String? = nil,
        message: String? = nil
    ) {
        self.status = status
        self.requestId = requestId
        self.details = details
        self.retryAfterSeconds = retryAfterSeconds
        self.raw = raw
        self.message = message
    }

    /// The envelope `message`, else `OptoLink request failed with status <status>`.
    public var errorDescription: String? {
        message ?? "OptoLink request failed with status \(status)"
    }

    /// A short label without request-specific values, for metrics and report rows: `http_<status>`.
    public var shortDescription: String {
        "http_\(status)"
    }
}
