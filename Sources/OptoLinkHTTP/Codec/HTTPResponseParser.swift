/// A received HTTP/1.1 response with its whole body.
package struct HTTPClientResponse: Sendable, Equatable {
    /// The status code, 100...999.
    package var status: Int
    /// `"HTTP/1.1"` or `"HTTP/1.0"`.
    package var version: String
    /// The header fields as received (framing fields included).
    package var headers: HTTPHeaders
    /// The body bytes, de-chunked when the response was chunked.
    package var body: [UInt8]
    /// Trailer fields of a chunked body, in order; empty otherwise.
    package var trailers: HTTPHeaders
    /// Nanoseconds the TLS handshake of this response's connection took, when the connection was
    /// opened for this request (its first response over `https`); `nil` over plain HTTP and on a
    /// reused connection. The client sets it; the parser never does.
    package var tlsHandshakeNanoseconds: UInt64?

    /// A response as the parser builds it.
    package init(
        status: Int, version: String = "HTTP/1.1", headers: HTTPHeaders = [:], body: [UInt8] = [],
        trailers: HTTPHeaders = [:]
    ) {
        self.status = status
        self.version = version
        self.headers = headers
        self.body = body
        self.trailers = trailers
    }
}

/// Why a response could not be parsed. Each ends the connection: framing can no longer be trusted.
package enum HTTPResponseParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The status line is not `HTTP/1.x SP 3DIGIT [SP reason]`.
    case malformedStatusLine
    /// A header field line breaks RFC 9112 §5 (see ``HTTPRequestParser`` for the same rules).
    case malformedHeader
    /// The status line plus headers exceed the head limit, in bytes.
    case headersTooLarge
    /// The body (declared or decoded) exceeds the body limit, in bytes.
    case bodyTooLarge
    /// `Content-Length` is not a decimal number, or several disagree.
    case invalidContentLength
    /// `Transfer-Encoding` names a coding other than a single final `chunked`.
    case unsupportedTransferEncoding
    /// A chunked body breaks the syntax.
    case malformedChunkedBody
    /// The connection ended before the response was complete.
    case truncated
    /// Bytes arrived while no request was waiting for a response.
    case unsolicited

    /// A short, value-free label usable as a metric or report key.
    package var shortDescription: String {
        switch self {
        case .malformedStatusLine: "malformed_status_line"
        case .malformedHeader: "malformed_header"
        case .headersTooLarge: "headers_too_large"
        case .bodyTooLarge: "body_too_large"
        case .invalidContentLength: "invalid_content_length"
        case .unsupportedTransferEncoding: "unsupported_transfer_encoding"
        case .malformedChunkedBody: "malformed_chunked_body"
        case .truncated: "truncated"
        case .unsolicited: "unsolicited"
        }
    }

    /// `bad response (truncated)` and the like.
    package var description: String { "bad response (\(shortDescription))" }
}

/// An incremental HTTP/1.1 response parser, the client side of the codec: feed bytes in any
/// fragmentation, take out interim (1xx) and final responses.
///
/// Body framing follows RFC 9112 §6.3: no body for a response to `HEAD` and for 1xx, 204 and
/// 304; `Transfer-Encoding: chunked` (trailers kept) takes precedence over `Content-Length`
/// (and then the connection is not reused); `Content-Length`; otherwise the body runs until
/// the server closes (``finish()``). The caller states, before each response, whether its
/// request was a `HEAD` (``expectResponse(toHEAD:)``). After a failure the parser stays failed.
package struct HTTPResponseParser: Sendable {
    /// Size limits, in bytes.
    package struct Limits: Sendable, Equatable {
        /// Largest status line plus header section (and, separately, trailer section).
        package var maxHeaderBytes: Int
        /// Largest body.
        package var maxBodyBytes: Int

        /// Defaults: 64 KiB of head, 16 MiB of body.
        package init(maxHeaderBytes: Int = 64 * 1024, maxBodyBytes: Int = 16 << 20) {
            self.maxHeaderBytes = maxHeaderBytes
            self.maxBodyBytes = maxBodyBytes
        }
    }

    /// One parse result.
    package enum Output: Sendable, Equatable {
        /// An interim response (`100 Continue`, `103 Early Hints`, …); the final one follows.
        case informational(status: Int, headers: HTTPHeaders)
        /// The final response. `keepAlive`: the connection may carry another request.
        case response(HTTPClientResponse, keepAlive: Bool)
        /// The response cannot be parsed; close the connection.
        case failure(HTTPResponseParseError)
    }

    private typealias Framer = HTTPMessageFramer<HTTPClientResponse, HTTPResponseParseError>

    /// The limits this parser enforces.
    package let limits: Limits
    private var framer: Framer
    private var headRequest = false
    private var awaiting = false

    /// A parser with empty buffers, expecting no response until ``expectResponse(toHEAD:)``.
    package init(limits: Limits = Limits()) {
        self.limits = limits
        framer = HTTPMessageFramer(maxHeaderBytes: limits.maxHeaderBytes, maxBodyBytes: limits.maxBodyBytes)
    }

    /// Bytes received and not yet returned.
    var bufferedByteCount: Int { framer.bufferedByteCount }

    /// `true` when no byte of a response is buffered (between responses).
    package var isIdle: Bool { framer.isIdle }

    /// Arms the parser for the response to the request just sent; `toHEAD` means it has no body.
    package mutating func expectResponse(toHEAD: Bool) {
        headRequest = toHEAD
        awaiting = true
    }

    /// Appends received bytes; call ``next()`` until it returns `nil`.
    package mutating func append<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        framer.append(bytes)
    }

    /// The next interim or final response, a failure, or `nil` when more bytes are needed.
    package mutating func next() -> Output? {
        if let failure = framer.failure { return .failure(failure) }
        if framer.isReadingBody { return nextBody() }
        guard framer.bufferedByteCount > 0 else { return nil }
        guard awaiting else { return .failure(framer.fail(.unsolicited)) }
        // Anything that cannot begin a status line (garbage, another protocol) fails at once
        // rather than when the request's deadline passes.
        guard framer.unreadMayStart(with: "HTTP/1.") else { return .failure(framer.fail(.malformedStatusLine)) }
        let (headRequest, limits) = (self.headRequest, self.limits)
        let progress = framer.nextHead {
            Self.parseHead($0, from: $1, to: $2, headRequest: headRequest, limits: limits)
        }
        switch progress {
        case .needMore: return nil
        case .failure(let error): return .failure(framer.fail(error))
        case .head(let head):
            if head.message.status < 200 {
                return .informational(status: head.message.status, headers: head.message.headers)
            }
            if case .length(0) = head.framing {
                awaiting = false
                return .response(head.message, keepAlive: head.keepAlive)
            }
            framer.beginBody(head)
            return nextBody()
        }
    }

    /// The connection reached end of input: completes a body that runs until close, or reports
    /// ``HTTPResponseParseError/truncated`` when a response was in progress; `nil` when idle.
    package mutating func finish() -> Output? {
        if let failure = framer.failure { return .failure(failure) }
        if let (head, body) = framer.finishAtClose() {
            var response = head.message
            response.body = body
            awaiting = false
            return .response(response, keepAlive: false)
        }
        if framer.isReadingBody || framer.bufferedByteCount > 0 { return .failure(framer.fail(.truncated)) }
        return nil
    }

    private mutating func nextBody() -> Output? {
        switch framer.nextBody() {
        case .needMore: return nil
        case .failure(let error): return .failure(framer.fail(error))
        case .complete(var head, let body, let trailers):
            head.message.body = body
            if case .chunked = head.framing { head.message.trailers = HTTPHeaders(trailers) }
            awaiting = false
            return .response(head.message, keepAlive: head.keepAlive)
        }
    }

    // MARK: - Head

    private static func parseHead(
        _ p: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, headRequest: Bool, limits: Limits
    ) -> Result<Framer.Head, HTTPResponseParseError> {
        // Status line: HTTP-version SP 3DIGIT SP [reason] CRLF (a missing SP before an empty reason is tolerated).
        let lineEnd = HTTPBytes.lineEnd(p, from: start)
        let version = lineEnd - start >= 12 ? Framer.version(p, from: start, to: start + 8) : .invalid
        guard version == .http10 || version == .http11, p[start + 8] == .space,
            HTTPBytes.isDigit(p[start + 9]), HTTPBytes.isDigit(p[start + 10]), HTTPBytes.isDigit(p[start + 11]),
            lineEnd == start + 12 || p[start + 12] == .space
        else { return .failure(.malformedStatusLine) }
        for i in (start + 12)..<lineEnd where p[i] < 0x20 && p[i] != .tab || p[i] == 0x7F {
            return .failure(.malformedStatusLine)
        }
        let isHTTP11 = version == .http11
        let status = Int(p[start + 9] - 0x30) * 100 + Int(p[start + 10] - 0x30) * 10 + Int(p[start + 11] - 0x30)
        guard status >= 100 else { return .failure(.malformedStatusLine) }

        let head: HTTPHeadFields
        switch Framer.fields(p, from: lineEnd + 2, to: end) {
        case .success(let parsed): head = parsed
        case .failure(let error): return .failure(error)
        }
        var keepAlive = Framer.persists(isHTTP11: isHTTP11, fields: head)
        let framing: Framer.BodyFraming
        if headRequest || status < 200 || status == 204 || status == 304 {
            framing = .length(0)
        } else if head.codings.present {
            guard head.codings.verdict == .chunkedOnly else { return .failure(.unsupportedTransferEncoding) }
            // Both framings: trust chunked, then close (RFC 9112 §6.3).
            if head.contentLength != nil { keepAlive = false }
            framing = .chunked
        } else if let length = head.contentLength {
            guard length <= limits.maxBodyBytes else { return .failure(.bodyTooLarge) }
            framing = .length(length)
        } else {
            framing = .untilClose
            keepAlive = false
        }
        let response = HTTPClientResponse(
            status: status, version: isHTTP11 ? "HTTP/1.1" : "HTTP/1.0", headers: HTTPHeaders(head.fields))
        return .success(Framer.Head(message: response, keepAlive: keepAlive, framing: framing))
    }
}
