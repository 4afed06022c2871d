#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why ``HTTPClient`` returned no response. The client never retries: each error is final for
/// its request, and the caller (the SDK's retry loop) decides what happens next.
package enum HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The host answered the connect with a reset: nothing listens on the port (`ECONNREFUSED`).
    case connectionRefused
    /// The connection could not be made for another reason: `errno` of `socket`/`connect`
    /// (`ENETUNREACH`, `EADDRNOTAVAIL`, `EMFILE` when out of descriptors, …).
    case cannotConnect(errno: Int32)
    /// The host name did not resolve to an address.
    case cannotResolve(host: String)
    /// The peer reset the connection (`ECONNRESET`, `EPIPE`) before the response was complete.
    case connectionReset
    /// The peer closed the connection before the response was complete (possibly before any byte).
    case connectionClosed
    /// The response broke HTTP/1.1 framing; the connection was closed.
    case badResponse(HTTPResponseParseError)
    /// The request's deadline passed (waiting for a connection, connecting, sending or receiving
    /// all count); its socket was closed at once.
    case timedOut
    /// The caller's task was cancelled; its socket was closed at once.
    case cancelled
    /// The client was shut down, or the request cannot be sent (`invalidRequest` reasons aside).
    case shutDown
    /// The TLS handshake failed (certificate not trusted, expired, for another host, or a
    /// protocol failure), or TLS could not be set up; nothing was sent.
    case tlsFailed(TLSFailure)
    /// The request itself is unusable, e.g. an empty host or a port outside 1...65535.
    case invalidRequest(String)

    /// A short, value-free label usable as a metric or report key.
    package var shortDescription: String {
        switch self {
        case .connectionRefused: "connection_refused"
        case .cannotConnect: "cannot_connect"
        case .cannotResolve: "cannot_resolve"
        case .connectionReset: "connection_reset"
        case .connectionClosed: "connection_closed"
        case .badResponse: "bad_response"
        case .timedOut: "timed_out"
        case .cancelled: "cancelled"
        case .shutDown: "shut_down"
        case .invalidRequest: "invalid_request"
        case .tlsFailed: "tls_failed"
        }
    }

    /// A sentence naming the cause.
    package var description: String {
        switch self {
        case .connectionRefused: "connection refused"
        case .cannotConnect(let code): "cannot connect: \(String(cString: strerror(code))) (errno \(code))"
        case .cannotResolve(let host): "cannot resolve host \"\(host)\""
        case .connectionReset: "connection reset by the peer before the response was complete"
        case .connectionClosed: "connection closed by the peer before the response was complete"
        case .badResponse(let error): "\(error)"
        case .timedOut: "timed out"
        case .cancelled: "cancelled"
        case .shutDown: "the HTTP client is shut down"
        case .invalidRequest(let why): "invalid request: \(why)"
        case .tlsFailed(let failure): "\(failure)"
        }
    }
}
