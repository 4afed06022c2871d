/// Why a request could not be parsed, and the status the server answers with before closing.
///
/// Every case closes the connection after its response: once framing is in doubt the rest of
/// the byte stream cannot be trusted.
package enum HTTPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The request line is not `METHOD SP target SP HTTP/x.y` with a token method → 400.
    case malformedRequestLine
    /// A header line has no colon, an empty or non-token name, whitespace before the colon,
    /// a control character in its value, or is an obsolete folded continuation → 400.
    case malformedHeader
    /// The request line plus headers (or a chunked body's trailers) exceed
    /// ``HTTPRequestParser/Limits/maxHeaderBytes`` → 431.
    case headersTooLarge
    /// `Content-Length`, or the chunks of a chunked body, exceed ``HTTPRequestParser/Limits/maxBodyBytes`` → 413.
    case bodyTooLarge
    /// `Transfer-Encoding` names a coding other than `chunked` (e.g. `gzip`, `identity`) → 501.
    case unsupportedTransferEncoding
    /// A framing conflict that could smuggle a request: `Transfer-Encoding` with `Content-Length`,
    /// `Transfer-Encoding` in HTTP/1.0, or `chunked` repeated or not the final coding → 400.
    case invalidTransferEncoding
    /// A chunked body breaks the syntax: a size that is not hexadecimal, a chunk not followed by
    /// CRLF, a bare LF, or a malformed trailer field → 400.
    case malformedChunkedBody
    /// A `POST`, `PUT` or `PATCH` came with neither `Content-Length` nor `Transfer-Encoding`, and
    /// the server opted in to ``HTTPRequestParser/Limits/requireContentLength`` → 411. By default
    /// such a request has an empty body instead.
    case lengthRequired
    /// `Content-Length` is not a decimal number, or several disagree → 400.
    case invalidContentLength
    /// The version is `HTTP/x.y` but not 1.0 or 1.1 → 505.
    case unsupportedVersion
    /// An HTTP/1.1 request has no `Host` field (RFC 9112 §3.2; HTTP/1.0 may leave it out) → 400.
    case missingHost
    /// A request has more than one `Host` field line (RFC 9112 §3.2) → 400.
    case multipleHosts
    /// The `Host` value is not `host[:port]` (whitespace, a comma, a stray `@` or `/`, a bad port),
    /// or an absolute-form target's authority is empty or invalid (RFC 9112 §3.2, RFC 9110 §4.2.1) → 400.
    case invalidHost

    /// The status code the server answers with.
    package var status: Int {
        switch self {
        case .malformedRequestLine, .malformedHeader, .invalidContentLength, .invalidTransferEncoding,
            .malformedChunkedBody, .missingHost, .multipleHosts, .invalidHost:
            400
        case .lengthRequired: 411
        case .bodyTooLarge: 413
        case .headersTooLarge: 431
        case .unsupportedTransferEncoding: 501
        case .unsupportedVersion: 505
        }
    }

    /// A short, value-free label usable as a metric or report key.
    package var shortDescription: String {
        switch self {
        case .malformedRequestLine: "malformed_request_line"
        case .malformedHeader: "malformed_header"
        case .headersTooLarge: "headers_too_large"
        case .bodyTooLarge: "body_too_large"
        case .unsupportedTransferEncoding: "unsupported_transfer_encoding"
        case .invalidTransferEncoding: "invalid_transfer_encoding"
        case .malformedChunkedBody: "malformed_chunked_body"
        case .lengthRequired: "length_required"
        case .invalidContentLength: "invalid_content_length"
        case .unsupportedVersion: "unsupported_version"
        case .missingHost: "missing_host"
        case .multipleHosts: "multiple_hosts"
        case .invalidHost: "invalid_host"
        }
    }

    /// `HTTP 431 (headers_too_large)` and the like.
    package var description: String { "HTTP \(status) (\(shortDescription))" }
}
