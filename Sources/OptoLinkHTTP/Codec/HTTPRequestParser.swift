/// An incremental HTTP/1.1 request parser: feed bytes in any fragmentation, take out whole requests.
///
/// Framing follows RFC 9112 with a deliberately small surface: a request line, header fields
/// terminated by CRLF (a bare LF is rejected), and a body framed by `Content-Length` only.
/// `Transfer-Encoding` (chunked included) is refused with 501. Several requests may sit in the
/// buffer at once (pipelining); ``next()`` returns them in arrival order. Empty lines before a
/// request line are skipped, as RFC 9112 §2.2 allows. After a failure the parser stays failed:
/// framing can no longer be trusted, so the caller answers ``HTTPParseError/status`` and closes.
///
/// Deliberately lenient where it is harmless: a missing `Host` header is accepted, header values
/// are not checked for UTF-8 (invalid bytes decode to U+FFFD), and an absolute-form target
/// (`GET http://h/p HTTP/1.1`) is passed through as the raw target. Strict where framing is at
/// stake (request smuggling): `Transfer-Encoding` with or without `Content-Length`, differing
/// duplicate `Content-Length`s, whitespace before a colon, folded lines, bare CR or LF.
public struct HTTPRequestParser: Sendable {
    /// Size limits and framing rules applied while parsing.
    public struct Limits: Sendable, Equatable {
        /// Largest request line plus header section, in bytes, including the final empty line (431 above).
        public var maxHeaderBytes: Int
        /// Largest `Content-Length`, in bytes (413 above).
        public var maxBodyBytes: Int
        /// When `true`, `POST`, `PUT` and `PATCH` without `Content-Length` are refused with 411;
        /// when `false` they have an empty body, as RFC 9112 §6.3 reads.
        public var requireContentLength: Bool

        /// Defaults: 16 KiB of head, 1 MiB of body, `Content-Length` required on POST/PUT/PATCH.
        public init(maxHeaderBytes: Int = 16 * 1024, maxBodyBytes: Int = 1 << 20, requireContentLength: Bool = true) {
            self.maxHeaderBytes = maxHeaderBytes
            self.maxBodyBytes = maxBodyBytes
            self.requireContentLength = requireContentLength
        }
    }

    /// One parse result: a whole request, or the error that ends the connection.
    public enum Output: Sendable, Equatable {
        /// A complete request. `keepAlive` applies the HTTP/1.0 and 1.1 persistence rules and `Connection`.
        case request(HTTPRequest, keepAlive: Bool)
        /// The request cannot be parsed; answer `error.status` and close.
        case failure(HTTPParseError)
    }

    private struct PendingBody: Sendable {
        var request: HTTPRequest
        var keepAlive: Bool
        var length: Int
        var expectsContinue: Bool
    }

    private struct Head {
        var request: HTTPRequest
        var keepAlive: Bool
        var contentLength: Int
        var expectsContinue: Bool
    }

    /// The limits this parser enforces.
    public let limits: Limits
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var scanIndex = 0
    private var pendingBody: PendingBody?
    private var failure: HTTPParseError?

    /// A parser with empty buffers.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Bytes received but not yet returned as part of a request.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// `true` when no partial request is buffered (the connection is between requests).
    public var isIdle: Bool { pendingBody == nil && readIndex == buffer.count }

    /// `true` when the request in progress sent `Expect: 100-continue` and its body has not fully
    /// arrived: the server should send `100 Continue` (then call ``continueSent()``) so the client
    /// does not wait for its own timeout before sending the body (RFC 9110 §10.1.1).
    public var isAwaitingContinue: Bool {
        guard let pending = pendingBody, pending.expectsContinue else { return false }
        return bufferedByteCount < pending.length
    }

    /// Records that `100 Continue` was sent for the request in progress.
    public mutating func continueSent() {
        pendingBody?.expectsContinue = false
    }

    /// Appends received bytes; call ``next()`` until it returns `nil` to take out what is complete.
    public mutating func append<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// The next complete request or the parse failure, or `nil` when more bytes are needed.
    public mutating func next() -> Output? {
        if let failure { return .failure(failure) }
        if let pending = pendingBody {
            guard bufferedByteCount >= pending.length else { return nil }
            var request = pending.request
            request.body = Array(buffer[readIndex..<(readIndex + pending.length)])
            readIndex += pending.length
            scanIndex = readIndex
            pendingBody = nil
            return .request(request, keepAlive: pending.keepAlive)
        }
        skipEmptyLines()
        guard readIndex < buffer.count else { return nil }
        guard let headEnd = findHeadEnd() else {
            return bufferedByteCount > limits.maxHeaderBytes ? fail(.headersTooLarge) : nil
        }
        if headEnd - readIndex > limits.maxHeaderBytes { return fail(.headersTooLarge) }
        let parsed = buffer.withUnsafeBufferPointer { Self.parseHead($0, from: readIndex, to: headEnd, limits: limits) }
        switch parsed {
        case .failure(let error):
            return fail(error)
        case .success(let head):
            readIndex = headEnd
            scanIndex = headEnd
            if head.contentLength == 0 { return .request(head.request, keepAlive: head.keepAlive) }
            pendingBody = PendingBody(
                request: head.request, keepAlive: head.keepAlive, length: head.contentLength,
                expectsContinue: head.expectsContinue)
            return next()
        }
    }

    private mutating func fail(_ error: HTTPParseError) -> Output {
        failure = error
        return .failure(error)
    }

    /// Drops consumed bytes so the buffer does not grow across keep-alive requests.
    private mutating func compact() {
        if readIndex == buffer.count {
            if buffer.capacity > 64 * 1024 { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
            readIndex = 0
            scanIndex = 0
        } else if readIndex >= 4096, readIndex * 2 >= buffer.count {
            buffer.removeSubrange(0..<readIndex)
            scanIndex -= readIndex
            readIndex = 0
        }
    }

    private mutating func skipEmptyLines() {
        while buffer.count - readIndex >= 2, buffer[readIndex] == .cr, buffer[readIndex + 1] == .lf {
            readIndex += 2
        }
        if scanIndex < readIndex { scanIndex = readIndex }
    }

    /// The index just past the CRLF CRLF that ends the head, or `nil`; remembers how far it looked.
    private mutating func findHeadEnd() -> Int? {
        let start = Swift.max(scanIndex, readIndex + 3)
        let found: Int? = buffer.withUnsafeBufferPointer { p in
            var i = start
            while i < p.count {
                if p[i] == .lf, p[i - 1] == .cr, p[i - 2] == .lf, p[i - 3] == .cr { return i + 1 }
                i += 1
            }
            return nil
        }
        if found == nil { scanIndex = Swift.max(readIndex, buffer.count - 3) }
        return found
    }

    // MARK: - Head

    private static func parseHead(
        _ p: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, limits: Limits
    ) -> Result<Head, HTTPParseError> {
        // Request line: METHOD SP request-target SP HTTP-version CRLF
        let lineEnd = lineEnd(p, from: start)
        guard let sp1 = firstIndex(of: .space, in: p, start, lineEnd), sp1 > start else {
            return .failure(.malformedRequestLine)
        }
        for i in start..<sp1 where !isTokenByte(p[i]) { return .failure(.malformedRequestLine) }
        guard let sp2 = firstIndex(of: .space, in: p, sp1 + 1, lineEnd), sp2 > sp1 + 1 else {
            return .failure(.malformedRequestLine)
        }
        for i in (sp1 + 1)..<sp2 where p[i] <= 0x20 || p[i] == 0x7F { return .failure(.malformedRequestLine) }
        let isHTTP11: Bool
        switch versionKind(p, sp2 + 1, lineEnd) {
        case .http10: isHTTP11 = false
        case .http11: isHTTP11 = true
        case .otherHTTP: return .failure(.unsupportedVersion)
        case .invalid: return .failure(.malformedRequestLine)
        }

        var fields: [(name: String, value: String)] = []
        var contentLength: Int?
        var sawTransferEncoding = false
        var connectionClose = false
        var connectionKeepAlive = false
        var expectsContinue = false
        var pos = lineEnd + 2
        while pos < end - 2 {
            let le = Self.lineEnd(p, from: pos)
            if p[pos] == .space || p[pos] == .tab { return .failure(.malformedHeader) }  // obs-fold
            guard let colon = firstIndex(of: .colon, in: p, pos, le), colon > pos else {
                return .failure(.malformedHeader)
            }
            for i in pos..<colon where !isTokenByte(p[i]) { return .failure(.malformedHeader) }
            var vs = colon + 1
            var ve = le
            while vs < ve, p[vs] == .space || p[vs] == .tab { vs += 1 }
            while ve > vs, p[ve - 1] == .space || p[ve - 1] == .tab { ve -= 1 }
            for i in vs..<ve {
                let c = p[i]
                if c < 0x20 && c != .tab || c == 0x7F { return .failure(.malformedHeader) }
            }
            let name = UnsafeBufferPointer(rebasing: p[pos..<colon])
            let value = UnsafeBufferPointer(rebasing: p[vs..<ve])
            if equalsLowercased(name, "content-length") {
                guard let length = parseContentLength(value) else { return .failure(.invalidContentLength) }
                if let previous = contentLength, previous != length { return .failure(.invalidContentLength) }
                contentLength = length
            } else if equalsLowercased(name, "transfer-encoding") {
                sawTransferEncoding = true
            } else if equalsLowercased(name, "expect") {
                expectsContinue = equalsLowercased(value, "100-continue")
            } else if equalsLowercased(name, "connection") {
                forEachToken(value) { token in
                    if equalsLowercased(token, "close") { connectionClose = true }
                    if equalsLowercased(token, "keep-alive") { connectionKeepAlive = true }
                }
            }
            fields.append((name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
            pos = le + 2
        }

        if sawTransferEncoding { return .failure(.unsupportedTransferEncoding) }
        let method = UnsafeBufferPointer(rebasing: p[start..<sp1])
        if contentLength == nil, limits.requireContentLength,
            equals(method, "POST") || equals(method, "PUT") || equals(method, "PATCH")
        {
            return .failure(.lengthRequired)
        }
        let length = contentLength ?? 0
        if length > limits.maxBodyBytes { return .failure(.bodyTooLarge) }

        let request = HTTPRequest(
            method: String(decoding: method, as: UTF8.self),
            target: String(decoding: UnsafeBufferPointer(rebasing: p[(sp1 + 1)..<sp2]), as: UTF8.self),
            version: isHTTP11 ? "HTTP/1.1" : "HTTP/1.0",
            headers: HTTPHeaders(fields)
        )
        let keepAlive = !connectionClose && (isHTTP11 || connectionKeepAlive)
        return .success(
            Head(
                request: request, keepAlive: keepAlive, contentLength: length,
                expectsContinue: expectsContinue && isHTTP11))
    }

    /// Index of the CR of the next CRLF at or after `from`. The head is known to end in CRLF CRLF.
    private static func lineEnd(_ p: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
        var i = from
        while !(p[i] == .cr && p[i + 1] == .lf) { i += 1 }
        return i
    }

    private static func firstIndex(of byte: UInt8, in p: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Int? {
        var i = from
        while i < to {
            if p[i] == byte { return i }
            i += 1
        }
        return nil
    }

    private enum VersionKind { case http10, http11, otherHTTP, invalid }

    private static func versionKind(_ p: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> VersionKind {
        guard to - from == 8, equals(UnsafeBufferPointer(rebasing: p[from..<(from + 5)]), "HTTP/"),
            isDigit(p[from + 5]), p[from + 6] == .dot, isDigit(p[from + 7])
        else { return .invalid }
        guard p[from + 5] == UInt8(ascii: "1") else { return .otherHTTP }
        switch p[from + 7] {
        case UInt8(ascii: "0"): return .http10
        case UInt8(ascii: "1"): return .http11
        default: return .otherHTTP
        }
    }

    /// Decimal digits only (no sign, no list); values past 18 digits saturate so they trip the body limit.
    private static func parseContentLength(_ value: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !value.isEmpty else { return nil }
        var result = 0
        for c in value {
            guard isDigit(c) else { return nil }
            if result > 100_000_000_000_000_000 {
                result = Int.max
                continue
            }
            result = result * 10 + Int(c - UInt8(ascii: "0"))
        }
        return result
    }

    private static func forEachToken(_ value: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void)
    {
        var s = 0
        while s < value.count {
            var e = s
            while e < value.count, value[e] != .comma { e += 1 }
            var ts = s
            var te = e
            while ts < te, value[ts] == .space || value[ts] == .tab { ts += 1 }
            while te > ts, value[te - 1] == .space || value[te - 1] == .tab { te -= 1 }
            if te > ts { body(UnsafeBufferPointer(rebasing: value[ts..<te])) }
            s = e + 1
        }
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    /// RFC 9110 `tchar`.
    private static func isTokenByte(_ c: UInt8) -> Bool {
        switch c {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: true
        default: false
        }
    }

    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        let l = literal.utf8Start
        for i in 0..<bytes.count where bytes[i] != l[i] { return false }
        return true
    }

    /// ASCII case-insensitive comparison against a lowercase literal.
    private static func equalsLowercased(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        let l = literal.utf8Start
        for i in 0..<bytes.count {
            var c = bytes[i]
            if c >= 0x41 && c <= 0x5A { c |= 0x20 }
            if c != l[i] { return false }
        }
        return true
    }
}

extension UInt8 {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")
    static let comma = UInt8(ascii: ",")
    static let dot = UInt8(ascii: ".")
}
