/// The HTTP/1.1 message framing both parsers share (RFC 9112): the receive buffer, where a head
/// (start line plus header section) ends, the version in a start line, and the body that follows
/// it, framed by a length, by `chunked`, or by the end of the connection.
///
/// A parser asks for the next head (``nextHead(_:)``), reads its start line and fields in its own
/// terms into a ``Head`` (its `Message` without the body, persistence, body framing), hands it
/// back with ``beginBody(_:)``, then takes the completed message (``nextBody()``). The framer
/// knows nothing of methods or statuses; the parsers know nothing of buffers and chunk syntax.
/// After a failure (``fail(_:)``) it stays failed: framing can no longer be trusted.
struct HTTPMessageFramer<Message: Sendable, Failure: HTTPFramingFailure>: Sendable {
    /// How a message's body is delimited, as its head declares it.
    enum BodyFraming: Sendable, Equatable {
        /// Exactly this many bytes (`Content-Length`, or 0 for a message without a body).
        case length(Int)
        /// `Transfer-Encoding: chunked`, trailers kept.
        case chunked
        /// Everything until the peer closes (a response with neither length nor chunked).
        case untilClose
    }

    /// A parsed head: the message without its body, and what framing and persistence need.
    struct Head: Sendable {
        var message: Message
        /// The connection may carry another message after this one.
        var keepAlive: Bool
        var framing: BodyFraming
        /// A request sent `Expect: 100-continue` and has not been answered `100 Continue` yet.
        var expectsContinue = false
    }

    /// What a call to ``nextHead(_:)`` reached.
    enum HeadProgress {
        case needMore
        case head(Head)
        case failure(Failure)
    }

    /// What a call to ``nextBody()`` reached.
    enum BodyProgress {
        case needMore
        case complete(Head, body: [UInt8], trailers: [(name: String, value: String)])
        case failure(Failure)
    }

    /// The version of a start line's `HTTP/x.y`.
    enum Version: Equatable {
        case http10, http11
        /// `HTTP/x.y` with digits, but not 1.0 or 1.1.
        case other
        /// Not `HTTP/x.y`.
        case invalid
    }

    private enum BodyState: Sendable {
        case length(Int)
        case chunked(ChunkedBodyDecoder)
        case untilClose
    }

    /// Largest head (start line plus header section, and separately a trailer section), in bytes.
    let maxHeaderBytes: Int
    /// Largest body, in bytes.
    let maxBodyBytes: Int
    private(set) var input = HTTPInputBuffer()
    /// The failure that ended parsing: framing can no longer be trusted, so it stays.
    private(set) var failure: Failure?
    /// The body in progress: set by ``beginBody(_:)``, cleared when it completes.
    private var body: BodyState?
    /// The head whose body is in progress.
    private(set) var pendingHead: Head?

    init(maxHeaderBytes: Int, maxBodyBytes: Int) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
    }

    /// Bytes received and not yet taken as part of a message.
    var bufferedByteCount: Int { input.unreadCount }

    /// `true` when a head was taken and its body is not complete yet.
    var isReadingBody: Bool { body != nil }

    /// `true` when no partial message is buffered.
    var isIdle: Bool { body == nil && input.unreadCount == 0 }

    /// Records that `100 Continue` was sent for the message in progress.
    mutating func continueSent() {
        pendingHead?.expectsContinue = false
    }

    /// `true` while the body in progress waits for bytes the peer has not sent: fewer than its
    /// length, or no byte of an unfinished chunked body.
    var awaitsBodyBytes: Bool {
        switch body {
        case .length(let length): bufferedByteCount < length
        case .chunked(let decoder): !decoder.isDone && bufferedByteCount == 0
        case .untilClose: true
        case nil: false
        }
    }

    /// Records the failure that ends parsing and returns it.
    mutating func fail(_ error: Failure) -> Failure {
        failure = error
        return error
    }

    mutating func append<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        input.append(bytes)
    }

    /// Skips empty lines before a start line (RFC 9112 §2.2 lets a server ignore them).
    mutating func skipEmptyLines() {
        var index = input.readIndex
        while input.bytes.count - index >= 2, input.bytes[index] == .cr, input.bytes[index + 1] == .lf { index += 2 }
        if index != input.readIndex { input.consume(to: index) }
    }

    /// Whether the unread bytes can still begin `prefix` (fewer bytes than it: whether they match its start).
    func unreadMayStart(with prefix: StaticString) -> Bool {
        let count = Swift.min(input.unreadCount, prefix.utf8CodeUnitCount)
        return prefix.withUTF8Buffer { expected in
            (0..<count).allSatisfy { input.bytes[input.readIndex + $0] == expected[$0] }
        }
    }

    /// Finds the next complete head and hands `parse` its bytes: the start line begins at `from`,
    /// the empty line that ends the header section ends at `to`. The head is consumed when
    /// `parse` succeeds.
    mutating func nextHead(
        _ parse: (_ p: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Result<Head, Failure>
    ) -> HeadProgress {
        let headEnd: Int
        switch input.scanHead() {
        case .end(let end): headEnd = end
        case .needMore: return bufferedByteCount > maxHeaderBytes ? .failure(.headersTooLarge) : .needMore
        case .bareLineBreak(let inFirstLine): return .failure(inFirstLine ? .malformedStartLine : .malformedHeader)
        }
        if headEnd - input.readIndex > maxHeaderBytes { return .failure(.headersTooLarge) }
        let parsed = input.bytes.withUnsafeBufferPointer { parse($0, input.readIndex, headEnd) }
        switch parsed {
        case .failure(let error): return .failure(error)
        case .success(let head):
            input.consume(to: headEnd)
            return .head(head)
        }
    }

    /// Starts the body of the message whose head was just taken.
    mutating func beginBody(_ head: Head) {
        pendingHead = head
        switch head.framing {
        case .length(let length): body = .length(length)
        case .chunked:
            body = .chunked(ChunkedBodyDecoder(maxBodyBytes: maxBodyBytes, maxTrailerBytes: maxHeaderBytes))
        case .untilClose: body = .untilClose
        }
    }

    /// Completes the body in progress, or `.needMore` (also for a body that runs until close:
    /// see ``finishAtClose()``).
    mutating func nextBody() -> BodyProgress {
        switch body {
        case nil:
            return .needMore
        case .untilClose:
            return bufferedByteCount > maxBodyBytes ? .failure(.bodyTooLarge) : .needMore
        case .length(let length):
            guard bufferedByteCount >= length, let head = pendingHead.take() else { return .needMore }
            body = nil
            return .complete(head, body: input.take(length), trailers: [])
        case .chunked(var decoder):
            // One owner of the decoder, so appending to its body never copies it.
            body = nil
            switch input.decode(&decoder) {
            case .needMore:
                body = .chunked(decoder)
                return .needMore
            case .failed(.bodyTooLarge): return .failure(.bodyTooLarge)
            case .failed(.trailersTooLarge): return .failure(.headersTooLarge)
            case .failed(.malformed): return .failure(.malformedChunkedBody)
            case .done:
                guard let head = pendingHead.take() else { return .needMore }
                return .complete(head, body: decoder.body, trailers: decoder.trailers)
            }
        }
    }

    /// The connection ended: the message framed by the close and its body, or `nil` when the
    /// message in progress (if any) is framed otherwise.
    mutating func finishAtClose() -> (Head, body: [UInt8])? {
        guard case .untilClose = body, let head = pendingHead.take() else { return nil }
        body = nil
        return (head, input.take(input.unreadCount))
    }

    /// The header section from `from` up to the empty line that ends at `to`.
    static func fields(_ p: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Result<HTTPHeadFields, Failure> {
        switch HTTPHeadFields.parse(p, from: from, to: to) {
        case .success(let fields): .success(fields)
        case .failure(.malformedHeader): .failure(.malformedHeader)
        case .failure(.invalidContentLength): .failure(.invalidContentLength)
        }
    }

    /// The version of `HTTP/x.y` at `p[from..<to]`.
    static func version(_ p: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Version {
        guard to - from == 8, to <= p.count,
            HTTPBytes.equals(UnsafeBufferPointer(rebasing: p[from..<(from + 5)]), "HTTP/"),
            HTTPBytes.isDigit(p[from + 5]), p[from + 6] == .dot, HTTPBytes.isDigit(p[from + 7])
        else { return .invalid }
        guard p[from + 5] == UInt8(ascii: "1") else { return .other }
        switch p[from + 7] {
        case UInt8(ascii: "0"): return .http10
        case UInt8(ascii: "1"): return .http11
        default: return .other
        }
    }

    /// Whether the connection may carry another message after this one (RFC 9112 §9.3):
    /// HTTP/1.1 unless `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`.
    static func persists(isHTTP11: Bool, fields: HTTPHeadFields) -> Bool {
        !fields.connectionClose && (isHTTP11 || fields.connectionKeepAlive)
    }
}

/// The errors a parser reports for what the shared framing finds; each parser's error type
/// names them in its own terms.
protocol HTTPFramingFailure: Error, Sendable {
    /// A bare CR or LF in the start line.
    static var malformedStartLine: Self { get }
    /// A field line breaks RFC 9112 §5, or a bare CR or LF after the start line.
    static var malformedHeader: Self { get }
    /// `Content-Length` is not a decimal number, or several disagree.
    static var invalidContentLength: Self { get }
    /// The head (or a chunked body's trailer section) exceeds the head limit.
    static var headersTooLarge: Self { get }
    /// The body exceeds the body limit.
    static var bodyTooLarge: Self { get }
    /// A chunked body breaks the syntax.
    static var malformedChunkedBody: Self { get }
}

extension HTTPParseError: HTTPFramingFailure {
    static var malformedStartLine: HTTPParseError { .malformedRequestLine }
}

extension HTTPResponseParseError: HTTPFramingFailure {
    static var malformedStartLine: HTTPResponseParseError { .malformedStatusLine }
}
