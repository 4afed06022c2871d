/// Writes the head of an HTTP/1.1 request for the client: request line, `Host`, fields, framing.
///
/// The serializer owns the framing: any `Content-Length`, `Transfer-Encoding` or `Host` among
/// the fields is dropped and the real ones written (`Content-Length` on every request with a
/// body, and on `POST`/`PUT`/`PATCH` even when empty). CR or LF inside a name or value (header
/// injection) becomes a space. The body itself is appended by the caller, at once or after
/// `100 Continue`.
package enum HTTPRequestSerializer {
    /// Appends `METHOD target HTTP/1.1`, `Host`, the fields and the framing header, then the empty line.
    ///
    /// - Parameters:
    ///   - target: the origin-form target, e.g. `/sdk/events?x=1` (must start with `/`).
    ///   - host: the `Host` value, e.g. `127.0.0.1:8080`.
    ///   - bodyLength: the body size in bytes that will follow.
    package static func serializeHead(
        method: String, target: String, host: String, headers: HTTPHeaders, bodyLength: Int,
        into buffer: inout [UInt8]
    ) {
        serializeHead(method: method, target: target, headers: headers, bodyLength: bodyLength, into: &buffer) {
            appendSanitized(host, to: &$0)
        }
    }

    /// Like ``serializeHead(method:target:host:headers:bodyLength:into:)``, with the `Host` value
    /// written from `host` and `port` (`host:port`, the port left out when it is 80; an IPv6
    /// literal in brackets) straight into `buffer`, without a string per request.
    package static func serializeHead(
        method: String, target: String, host: String, port: Int, headers: HTTPHeaders, bodyLength: Int,
        into buffer: inout [UInt8]
    ) {
        serializeHead(method: method, target: target, headers: headers, bodyLength: bodyLength, into: &buffer) {
            let bracketed = host.utf8.contains(UInt8(ascii: ":")) && host.utf8.first != UInt8(ascii: "[")
            if bracketed { $0.append(UInt8(ascii: "[")) }
            appendSanitized(host, to: &$0)
            if bracketed { $0.append(UInt8(ascii: "]")) }
            if port != 80 {
                $0.append(UInt8(ascii: ":"))
                HTTPResponseSerializer.appendDecimal(port, to: &$0)
            }
        }
    }

    private static func serializeHead(
        method: String, target: String, headers: HTTPHeaders, bodyLength: Int, into buffer: inout [UInt8],
        host appendHost: (inout [UInt8]) -> Void
    ) {
        appendSanitized(method, to: &buffer)
        buffer.append(.space)
        appendSanitized(target.isEmpty ? "/" : target, to: &buffer)
        buffer.append(contentsOf: " HTTP/1.1\r\nHost: ".utf8)
        appendHost(&buffer)
        buffer.append(contentsOf: crlf)
        for field in headers.fields where !isOwnedHeader(field.name) {
            appendSanitized(field.name, to: &buffer)
            buffer.append(contentsOf: ": ".utf8)
            appendSanitized(field.value, to: &buffer)
            buffer.append(contentsOf: crlf)
        }
        if bodyLength > 0 || method == "POST" || method == "PUT" || method == "PATCH" {
            buffer.append(contentsOf: "Content-Length: ".utf8)
            HTTPResponseSerializer.appendDecimal(bodyLength, to: &buffer)
            buffer.append(contentsOf: crlf)
        }
        buffer.append(contentsOf: crlf)
    }

    private static let crlf: [UInt8] = [.cr, .lf]

    private static func isOwnedHeader(_ name: String) -> Bool {
        name.caseInsensitiveEquals("content-length") || name.caseInsensitiveEquals("transfer-encoding")
            || name.caseInsensitiveEquals("host")
    }

    static func appendSanitized(_ text: String, to buffer: inout [UInt8]) {
        let start = buffer.count
        // One copy from the string's contiguous UTF-8 (native strings have it), not byte by byte.
        if text.utf8.withContiguousStorageIfAvailable({ buffer.append(contentsOf: $0) }) == nil {
            buffer.append(contentsOf: text.utf8)
        }
        for index in start..<buffer.count where buffer[index] == .cr || buffer[index] == .lf {
            buffer[index] = .space
        }
    }
}
