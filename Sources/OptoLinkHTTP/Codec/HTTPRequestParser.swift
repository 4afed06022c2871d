/// An incremental HTTP/1.1 request parser: feed bytes in any fragmentation, take out whole requests.
///
/// Framing follows RFC 9112 with a deliberately small surface: a request line, header fields
/// terminated by CRLF (a bare LF is rejected), and a body framed by `Content-Length` or by
/// `Transfer-Encoding: chunked` (decoded; trailer fields are read and dropped). Other transfer
/// codings are refused with 501. Several requests may sit in the
/// buffer at once (pipelining); ``next()`` returns them in arrival order. Empty lines before a
/// request line are skipped, as RFC 9112 §2.2 allows. After a failure the parser stays failed:
/// framing can no longer be trusted, so the caller answers ``HTTPParseError/status`` and closes.
///
/// A request with neither `Content-Length` nor `Transfer-Encoding` has an empty body (RFC 9112
/// §6.3), whatever its method. `Host` follows RFC 9112 §3.2, refused with 400: missing in
/// HTTP/1.1 (HTTP/1.0 may leave it out), sent twice, or not `host[:port]` (whitespace, a comma,
/// userinfo); an empty value is valid. An `http://` or `https://` absolute-form target
/// (`GET http://h/p HTTP/1.1`) still needs `Host`, but its authority wins: the request carries
/// origin-form `/p` and `Host: h`. Header values are not checked for UTF-8 (invalid bytes decode
/// to U+FFFD). Strict where framing is at stake (request smuggling), each refused with 400:
/// `Transfer-Encoding` together with `Content-Length`, `Transfer-Encoding` in HTTP/1.0,
/// `chunked` twice or not the final coding, a malformed chunk size or terminator, differing
/// duplicate `Content-Length`s, whitespace before a colon, folded lines, bare CR or LF.
package struct HTTPRequestParser: Sendable {
    /// Size limits and framing rules applied while parsing.
    package struct Limits: Sendable, Equatable {
        /// Largest request line plus header section, in bytes, including the final empty line (431 above).
        package var maxHeaderBytes: Int
        /// Largest body, in bytes: a `Content-Length` above it, or chunks adding up past it (413).
        package var maxBodyBytes: Int
        /// When `false` (the default), a request with neither `Content-Length` nor `Transfer-Encoding`
        /// has an empty body, as RFC 9112 §6.3 reads, whatever its method. When `true`, such a `POST`,
        /// `PUT` or `PATCH` is refused with 411 (a policy RFC 9110 §15.5.12 allows, e.g. for a server
        /// that wants every client to state its length); the emulator never turns it on.
        package var requireContentLength: Bool

        /// Defaults: 16 KiB of head, 1 MiB of body, a body-less POST/PUT/PATCH accepted as empty.
        package init(maxHeaderBytes: Int = 16 * 1024, maxBodyBytes: Int = 1 << 20, requireContentLength: Bool = false) {
            self.maxHeaderBytes = maxHeaderBytes
            self.maxBodyBytes = maxBodyBytes
            self.requireContentLength = requireContentLength
        }
    }

    /// One parse result: a whole request, or the error that ends the connection.
    package enum Output: Sendable, Equatable {
        /// A complete request. `keepAlive` applies the HTTP/1.0 and 1.1 persistence rules and `Connection`.
        case request(HTTPRequest, keepAlive: Bool)
        /// The request cannot be parsed; answer `error.status` and close.
        case failure(HTTPParseError)
    }

    private typealias Framer = HTTPMessageFramer<HTTPRequest, HTTPParseError>
    private typealias Head = Framer.Head

    /// The limits this parser enforces.
    package let limits: Limits
    private var framer: Framer

    /// A parser with empty buffers.
    package init(limits: Limits = Limits()) {
        self.limits = limits
        framer = HTTPMessageFramer(maxHeaderBytes: limits.maxHeaderBytes, maxBodyBytes: limits.maxBodyBytes)
    }

    /// Bytes received but not yet returned as part of a request.
    var bufferedByteCount: Int { framer.bufferedByteCount }

    /// `true` when no partial request is buffered (the connection is between requests).
    package var isIdle: Bool { framer.isIdle }

    /// `true` when the request in progress sent `Expect: 100-continue` and its body has not fully
    /// arrived: the server should send `100 Continue` (then call ``continueSent()``) so the client
    /// does not wait for its own timeout before sending the body (RFC 9110 §10.1.1).
    package var isAwaitingContinue: Bool {
        framer.pendingHead?.expectsContinue == true && framer.awaitsBodyBytes
    }

    /// Records that `100 Continue` was sent for the request in progress.
    package mutating func continueSent() {
        framer.continueSent()
    }

    /// Appends received bytes; call ``next()`` until it returns `nil` to take out what is complete.
    package mutating func append<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        framer.append(bytes)
    }

    /// The next complete request or the parse failure, or `nil` when more bytes are needed.
    package mutating func next() -> Output? {
        if let failure = framer.failure { return .failure(failure) }
        if framer.isReadingBody { return nextBody() }
        framer.skipEmptyLines()
        guard framer.bufferedByteCount > 0 else { return nil }
        let limits = self.limits
        switch framer.nextHead({ Self.parseHead($0, from: $1, to: $2, limits: limits) })
        {
        case .needMore: return nil
        case .failure(let error): return .failure(framer.fail(error))
        case .head(let head):
            if case .length(0) = head.framing { return .request(head.message, keepAlive: head.keepAlive) }
            framer.beginBody(head)
            return nextBody()
        }
    }

    /// Completes the body of the request whose head was parsed, or `nil` when more bytes are needed.
    private mutating func nextBody() -> Output? {
        switch framer.nextBody() {
        case .needMore: return nil
        case .failure(let error): return .failure(framer.fail(error))
        case .complete(var head, let body, _):
            head.message.body = body
            return .request(head.message, keepAlive: head.keepAlive)
        }
    }

    // MARK: - Head

    private static func parseHead(
        _ p: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, limits: Limits
    ) -> Result<Head, HTTPParseError> {
        // Request line: METHOD SP request-target SP HTTP-version CRLF
        let lineEnd = HTTPBytes.lineEnd(p, from: start)
        guard let sp1 = HTTPBytes.firstIndex(of: .space, in: p, start, lineEnd), sp1 > start else {
            return .failure(.malformedRequestLine)
        }
        for i in start..<sp1 where !HTTPBytes.isTokenByte(p[i]) { return .failure(.malformedRequestLine) }
        guard let sp2 = HTTPBytes.firstIndex(of: .space, in: p, sp1 + 1, lineEnd), sp2 > sp1 + 1 else {
            return .failure(.malformedRequestLine)
        }
        for i in (sp1 + 1)..<sp2 where p[i] <= 0x20 || p[i] == 0x7F { return .failure(.malformedRequestLine) }
        let isHTTP11: Bool
        switch Framer.version(p, from: sp2 + 1, to: lineEnd) {
        case .http10: isHTTP11 = false
        case .http11: isHTTP11 = true
        case .other: return .failure(.unsupportedVersion)
        case .invalid: return .failure(.malformedRequestLine)
        }

        let head: HTTPHeadFields
        switch Framer.fields(p, from: lineEnd + 2, to: end) {
        case .success(let parsed): head = parsed
        case .failure(let error): return .failure(error)
        }

        var chunked = false
        if head.codings.present {
            // Smuggling shapes first: both framings, chunked outside HTTP/1.1, chunked not the one final coding.
            if head.contentLength != nil || !isHTTP11 { return .failure(.invalidTransferEncoding) }
            switch head.codings.verdict {
            case .chunkedOnly: chunked = true
            case .malformed: return .failure(.invalidTransferEncoding)
            case .unsupported: return .failure(.unsupportedTransferEncoding)
            }
        }
        let method = UnsafeBufferPointer(rebasing: p[start..<sp1])
        if head.contentLength == nil, !chunked, limits.requireContentLength,
            HTTPBytes.equals(method, "POST") || HTTPBytes.equals(method, "PUT") || HTTPBytes.equals(method, "PATCH")
        {
            return .failure(.lengthRequired)
        }
        let length = head.contentLength ?? 0
        if length > limits.maxBodyBytes { return .failure(.bodyTooLarge) }

        // Host (RFC 9112 §3.2): one field with a valid value; only HTTP/1.0 may leave it out.
        if head.hostCount > 1 { return .failure(.multipleHosts) }
        if let host = head.host {
            guard HTTPBytes.isValidHost(UnsafeBufferPointer(rebasing: p[host])) else { return .failure(.invalidHost) }
        } else if isHTTP11 {
            return .failure(.missingHost)
        }
        var fields = head.fields
        var target = String(decoding: UnsafeBufferPointer(rebasing: p[(sp1 + 1)..<sp2]), as: UTF8.self)
        if let absolute = absoluteForm(p, from: sp1 + 1, to: sp2) {
            // RFC 9112 §3.2.2: the target's authority wins over Host; handlers see origin-form.
            guard let authority = absolute.authority else { return .failure(.invalidHost) }
            target = absolute.target
            if let index = fields.firstIndex(where: { $0.name.caseInsensitiveEquals("host") }) {
                fields[index].value = authority
            } else {
                fields.append((name: "Host", value: authority))
            }
        }

        let request = HTTPRequest(
            method: String(decoding: method, as: UTF8.self), target: target,
            version: isHTTP11 ? "HTTP/1.1" : "HTTP/1.0", headers: HTTPHeaders(fields)
        )
        return .success(
            Head(
                message: request, keepAlive: Framer.persists(isHTTP11: isHTTP11, fields: head),
                framing: chunked ? .chunked : .length(length), expectsContinue: head.expectsContinue && isHTTP11))
    }

    /// An `http://` or `https://` absolute-form target (RFC 9112 §3.2.2) split into its authority
    /// (`nil` when empty, or not `host[:port]`, e.g. with userinfo) and its origin-form rest
    /// (`/` when the path is empty); `nil` for every other form, which stays as sent.
    private static func absoluteForm(_ p: UnsafeBufferPointer<UInt8>, from: Int, to: Int)
        -> (authority: String?, target: String)?
    {
        let target = UnsafeBufferPointer(rebasing: p[from..<to])
        let schemeLength: Int
        if target.count >= 7, HTTPBytes.equalsLowercased(UnsafeBufferPointer(rebasing: target[0..<7]), "http://") {
            schemeLength = 7
        } else if target.count >= 8,
            HTTPBytes.equalsLowercased(UnsafeBufferPointer(rebasing: target[0..<8]), "https://")
        {
            schemeLength = 8
        } else {
            return nil
        }
        var end = schemeLength
        while end < target.count, target[end] != UInt8(ascii: "/"), target[end] != UInt8(ascii: "?") { end += 1 }
        let authority = UnsafeBufferPointer(rebasing: target[schemeLength..<end])
        let rest = String(decoding: UnsafeBufferPointer(rebasing: target[end...]), as: UTF8.self)
        let valid = !authority.isEmpty && HTTPBytes.isValidHost(authority) && authority[0] != .colon
        return (
            valid ? String(decoding: authority, as: UTF8.self) : nil,
            rest.hasPrefix("/") ? rest : "/" + rest
        )
    }
}
