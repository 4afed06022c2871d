import OptoLinkHTTP
import Testing

/// The `Host` field the client writes from a request's host and port.
@Suite struct RequestHostFieldTests {
    static func head(host: String, port: Int) -> String {
        var bytes: [UInt8] = []
        HTTPRequestSerializer.serializeHead(
            method: "GET", target: "/x", host: host, port: port, headers: ["Host": "ignored"], bodyLength: 0,
            into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test(arguments: [
        ("127.0.0.1", 80, "127.0.0.1"), ("127.0.0.1", 8080, "127.0.0.1:8080"), ("::1", 80, "[::1]"),
        ("::1", 65535, "[::1]:65535"), ("[::1]", 81, "[::1]:81"), ("localhost", 1, "localhost:1"),
        ("evil\r\nX-Injected 1", 80, "evil  X-Injected 1"),
    ])
    func hostAndPortMakeTheHostField(host: String, port: Int, field: String) {
        #expect(Self.head(host: host, port: port) == "GET /x HTTP/1.1\r\nHost: \(field)\r\n\r\n")
    }

    /// The string form writes its value as given, sanitised the same way.
    @Test func theStringFormWritesTheValueAsGiven() {
        var bytes: [UInt8] = []
        HTTPRequestSerializer.serializeHead(
            method: "POST", target: "", host: "h:1\n", headers: [:], bodyLength: 0, into: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "POST / HTTP/1.1\r\nHost: h:1 \r\nContent-Length: 0\r\n\r\n")
    }
}
