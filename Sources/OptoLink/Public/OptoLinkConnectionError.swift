import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// No HTTP response arrived: connect failure, reset, or the per-attempt deadline passed
/// (seed 000, "The error pair"). Safe to retry later.
public struct OptoLinkConnectionError: OptoLinkError, LocalizedError, Equatable {
    /// Why no response arrived; `.timedOut` when the SDK's per-attempt deadline fired.
    public let underlying: URLError

    /// Wraps the transport's `URLError` (`.timedOut` when the SDK's own deadline fired).
    public init(underlying: URLError) {
        self.underlying = underlying
    }

    /// `OptoLink request got no response (<shortDescription>)`, for people reading logs.
    public var errorDescription: String? {
        "OptoLink request got no response (\(shortDescription))"
    }

    /// A short label without request-specific values, for metrics and report rows,
    /// e.g. `timed_out`, `connection_refused`, `connection_lost`.
    public var shortDescription: String {
        switch underlying.code {
        case .timedOut: "timed_out"
        case .cannotConnectToHost: "connection_refused"
        case .networkConnectionLost: "connection_lost"
        case .badServerResponse: "bad_server_response"
        case .cancelled: "cancelled"
        case .notConnectedToInternet: "not_connected"
        case .cannotFindHost, .dnsLookupFailed: "cannot_find_host"
        case .unknown: "unknown"
        default: "url_error_\(underlying.code.rawValue)"
        }
    }
}
