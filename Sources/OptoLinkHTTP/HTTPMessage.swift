/// HTTP/1.1 header fields in arrival order, with case-insensitive lookup.
package struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// The fields as received or added: names keep their case, values are trimmed of surrounding whitespace.
    package private(set) var fields: [(name: String, value: String)]

    /// Headers holding `fields` in this order.
    package init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }
    /// Headers from a literal such as `["Content-Type": "application/json"]`, in source order.
    package init(dictionaryLiteral elements: (String, String)...) {
        self.fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The first value for `name` (case-insensitive), or `nil`.
    package subscript(name: String) -> String? {
        for field in fields where field.name.caseInsensitiveEquals(name) { return field.value }
        return nil
    }

    /// Every value for `name` (case-insensitive), in order.
    package func values(for name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    /// Appends one field, keeping any earlier ones with the same name.
    package mutating func add(_ name: String, _ value: String) { fields.append((name: name, value: value)) }

    /// Replaces every value of `name` with one.
    package mutating func replace(_ name: String, _ value: String) {
        fields.removeAll { $0.name.caseInsensitiveEquals(name) }
        fields.append((name: name, value: value))
    }

    /// Iterates the fields in order.
    package func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// Same fields, same order, same case.
    package static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

extension String {
    /// ASCII case-insensitive equality (header names are ASCII tokens); allocates nothing.
    package func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        for (a, b) in zip(utf8, other.utf8) where a != b {
            let foldedA = a >= 0x41 && a <= 0x5A ? a | 0x20 : a
            let foldedB = b >= 0x41 && b <= 0x5A ? b | 0x20 : b
            if foldedA != foldedB { return false }
        }
        return true
    }
}

/// A parsed HTTP/1.1 request with its whole body.
package struct HTTPRequest: Sendable, Equatable {
    /// `GET`, `POST`, … as sent.
    package var method: String
    /// The request-target as sent, e.g. `/acme/abc123/data?deviceId=x`; an absolute-form target
    /// (`http://h/p?q`) arrives reduced to origin-form (`/p?q`), its authority in `Host`.
    package var target: String
    /// `target` up to the `?`, still percent-encoded.
    package var path: String
    /// The text after `?`, still percent-encoded; `nil` when there is none.
    package var query: String?
    /// `"HTTP/1.1"` or `"HTTP/1.0"`.
    package var version: String
    /// The header fields as received.
    package var headers: HTTPHeaders
    /// The body bytes (`Content-Length` framed).
    package var body: [UInt8]

    /// A request; `path` and `query` are split from `target` at the first `?`.
    package init(
        method: String, target: String, version: String = "HTTP/1.1", headers: HTTPHeaders = [:],
        body: [UInt8] = []
    ) {
        self.method = method
        self.target = target
        if let q = target.firstIndex(of: "?") {
            self.path = String(target[..<q])
            self.query = String(target[target.index(after: q)...])
        } else {
            self.path = target
            self.query = nil
        }
        self.version = version
        self.headers = headers
        self.body = body
    }
}

/// A response to serialize. `Content-Length` and `Connection` are added by the server.
package struct HTTPResponse: Sendable, Equatable {
    /// The status code, e.g. 200 or 429 (outside 100...999 the server sends 500).
    package var status: Int
    /// Header fields to send; framing fields (`Content-Length`, `Connection`, `Transfer-Encoding`) are ignored.
    package var headers: HTTPHeaders
    /// The body bytes (omitted on the wire for HEAD requests and 1xx/204/304).
    package var body: [UInt8]

    /// A response with `status`, optional headers and body.
    package init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Who is on the other end of a connection.
package struct HTTPConnectionInfo: Sendable, Equatable {
    /// The peer's IP address in text form (`127.0.0.1`, `::1`).
    package var peerAddress: String
    /// The peer's TCP port.
    package var peerPort: Int
    /// Unique per accepted connection, increasing.
    package var connectionId: UInt64

    /// Connection details as the server fills them in.
    package init(peerAddress: String, peerPort: Int, connectionId: UInt64) {
        self.peerAddress = peerAddress
        self.peerPort = peerPort
        self.connectionId = connectionId
    }
}

/// What the server does with a request once a handler has looked at it.
package enum HTTPHandlerResult: Sendable, Equatable {
    /// Write the response now.
    case respond(HTTPResponse)
    /// Write the response after `delay` without blocking the event loop (latency faults).
    case respondAfter(HTTPResponse, delay: Duration)
    /// Abort the connection with a TCP reset and write nothing.
    case reset
    /// Close the connection in order (FIN) with no response to this request: the client sees
    /// the connection end before any answer, as from a backend that refuses work. Responses
    /// to earlier pipelined requests are still written first.
    case close
}

/// Handles one request. Runs on an event-loop thread: it must not block or sleep; keep
/// shared state behind a `Mutex`. Delays go through ``HTTPHandlerResult/respondAfter(_:delay:)``.
package typealias HTTPHandler = @Sendable (HTTPRequest, HTTPConnectionInfo) -> HTTPHandlerResult

/// What the server knows about an error it answers by itself (a request it cannot parse, or one too slow).
package struct HTTPServerErrorContext: Sendable, Equatable {
    /// 400, 408, 411 (only with ``HTTPRequestParser/Limits/requireContentLength``), 413, 431, 501 or 505.
    package var status: Int
    /// The parse failure behind the status; `nil` for 408 (the request did not arrive in time).
    package var parseError: HTTPParseError?
    /// The connection the error is answered on.
    package var connection: HTTPConnectionInfo

    /// A context as the server fills it in.
    package init(status: Int, parseError: HTTPParseError?, connection: HTTPConnectionInfo) {
        self.status = status
        self.parseError = parseError
        self.connection = connection
    }
}

/// Builds the response for an error the server answers by itself, so an application can give
/// protocol errors the same body shape as its own (the emulator sends its JSON error envelope).
/// Runs on a loop thread; must not block. Framing headers in the result are replaced, and the
/// connection is closed after it.
package typealias HTTPErrorRenderer = @Sendable (HTTPServerErrorContext) -> HTTPResponse

/// The renderer used when none is given: `text/plain`, e.g. `400 Bad Request`.
let plainTextErrorRenderer: HTTPErrorRenderer = { context in
    let body = Array("\(context.status) \(HTTPStatusReason.phrase(for: context.status))\n".utf8)
    return HTTPResponse(status: context.status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: body)
}
