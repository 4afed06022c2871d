/// Writes an ``HTTPResponse`` as HTTP/1.1 bytes: status line, headers, framing, body.
///
/// The serializer owns the framing headers: any `Content-Length`, `Transfer-Encoding` or
/// `Connection` the handler set is dropped and replaced by the real ones. CR or LF inside a
/// header name or value (response splitting) is replaced by a space.
package enum HTTPResponseSerializer {
    /// How the connection continues after this response.
    package enum Persistence: Sendable, Equatable {
        /// HTTP/1.1 keep-alive (no `Connection` header needed).
        case keepAlive
        /// HTTP/1.0 keep-alive: the client asked for it, so `Connection: keep-alive` is sent.
        case keepAliveHTTP10
        /// The server closes after this response: `Connection: close` is sent.
        case close
    }

    /// Appends the serialized `response` to `buffer`.
    ///
    /// - Parameters:
    ///   - omitBody: `true` for a `HEAD` request: `Content-Length` still states the body size, no body follows.
    ///   - dateHeader: a preformatted `Date: …\r\n` line (bytes), or empty to send none.
    package static func serialize(
        _ response: HTTPResponse, persistence: Persistence, omitBody: Bool = false,
        dateHeader: [UInt8] = [], into buffer: inout [UInt8]
    ) {
        let status = (100...999).contains(response.status) ? response.status : 500
        buffer.append(contentsOf: "HTTP/1.1 ".utf8)
        appendDecimal(status, to: &buffer)
        buffer.append(.space)
        buffer.append(contentsOf: HTTPStatusReason.phrase(for: status).utf8)
        buffer.append(contentsOf: crlf)
        buffer.append(contentsOf: dateHeader)
        for field in response.headers.fields where !isFramingHeader(field.name) {
            HTTPRequestSerializer.appendSanitized(field.name, to: &buffer)
            buffer.append(contentsOf: ": ".utf8)
            HTTPRequestSerializer.appendSanitized(field.value, to: &buffer)
            buffer.append(contentsOf: crlf)
        }
        // 1xx, 204 and 304 carry no body (RFC 9110 §6.4.1); 1xx and 204 also no Content-Length.
        let bodyForbidden = status < 200 || status == 204 || status == 304
        if status >= 200 && status != 204 {
            buffer.append(contentsOf: "Content-Length: ".utf8)
            appendDecimal(bodyForbidden ? 0 : response.body.count, to: &buffer)
            buffer.append(contentsOf: crlf)
        }
        switch persistence {
        case .keepAlive: break
        case .keepAliveHTTP10: buffer.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        case .close: buffer.append(contentsOf: "Connection: close\r\n".utf8)
        }
        buffer.append(contentsOf: crlf)
        if !omitBody && !bodyForbidden { buffer.append(contentsOf: response.body) }
    }

    private static let crlf: [UInt8] = [.cr, .lf]

    private static func isFramingHeader(_ name: String) -> Bool {
        name.caseInsensitiveEquals("content-length") || name.caseInsensitiveEquals("connection")
            || name.caseInsensitiveEquals("transfer-encoding")
    }

    /// The interim response sent when a request with `Expect: 100-continue` waits for its body.
    static let continueResponse: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    static func appendDecimal(_ value: Int, to buffer: inout [UInt8]) {
        guard value > 0 else {
            buffer.append(UInt8(ascii: "0"))
            return
        }
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var v = value
        withUnsafeMutableBytes(of: &digits) { d in
            while v > 0 {
                d[count] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
                count += 1
            }
            for i in stride(from: count - 1, through: 0, by: -1) { buffer.append(d[i]) }
        }
    }
}
