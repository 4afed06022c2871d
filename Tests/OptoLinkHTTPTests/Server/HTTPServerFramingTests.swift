import OptoLinkHTTP
import Testing

/// Request framing the server settles before its handler runs: `Host` (RFC 9112 §3.2) and a
/// request with no body framing at all (RFC 9112 §6.3), over real loopback sockets.
///
/// Serialized for the same reason as ``HTTPServerTests``: the blocking test clients hold cooperative threads.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct HTTPServerFramingTests {
    /// Echoes `method target Host=… body` so a test sees what the handler was given.
    private static let hostEcho: HTTPHandler = { request, _ in
        let host = request.headers.values(for: "Host").joined(separator: "|")
        let body = String(decoding: request.body, as: UTF8.self)
        return .respond(
            HTTPResponse(status: 200, body: Array("\(request.method) \(request.target) \(host) \(body)".utf8)))
    }

    /// `curl -X POST …/__admin/reset` sends neither header: it reaches the handler with an empty
    /// body and the connection stays usable for the next request.
    @Test func requestsWithoutFramingHeadersReachTheHandlerWithAnEmptyBody() async throws {
        try await withHTTPServer(.init(), handler: Self.hostEcho) { server in
            let client = try TestClient(port: server.port)
            for method in ["POST", "PUT", "PATCH", "DELETE"] {
                try client.send("\(method) /reset HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n")
                let response = try client.readResponse()
                #expect(response.status == 200)
                #expect(response.bodyText == "\(method) /reset x ")
                #expect(response.header("Connection") == nil)
            }
            // Pipelined behind one: the next request's bytes are not taken for its body.
            try client.send(
                "POST /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok")
            #expect(try client.readResponse().bodyText == "POST /a x ")
            #expect(try client.readResponse().bodyText == "POST /b x ok")
            #expect(server.counters().badRequestsByStatus.isEmpty)
        }
    }

    /// 411 is reachable only when a server asks for it.
    @Test func a411NeedsTheOptIn() async throws {
        let strict = HTTPServer.Configuration(limits: .init(requireContentLength: true))
        try await withHTTPServer(strict, handler: Self.hostEcho) { server in
            let client = try TestClient(port: server.port)
            try client.send("POST /reset HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 411)
            #expect(response.header("Connection") == "close")
            #expect(client.waitForClose() == nil)
        }
    }

    @Test func http10WithoutHostIsStillAnswered() async throws {
        try await withHTTPServer(.init(), handler: Self.hostEcho) { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.bodyText == "GET /old  ")
            try client.send("POST /old HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\n1")
            #expect(try client.readResponse().bodyText == "POST /old  1")
            #expect(server.counters().badRequestsByStatus.isEmpty)
        }
    }

    /// Every Host fault is answered 400 by the server, closes that connection, and never reaches the handler.
    @Test(arguments: [
        ("GET /h HTTP/1.1\r\nAccept: */*\r\n\r\n", "missing_host"),
        ("GET /h HTTP/1.1\r\nHost: x\r\nhost: x\r\n\r\n", "multiple_hosts"),
        ("GET /h HTTP/1.1\r\nHost: x, y\r\n\r\n", "invalid_host"),
        ("GET /h HTTP/1.1\r\nHost: user@x\r\n\r\n", "invalid_host"),
        ("GET http:///h HTTP/1.1\r\nHost: x\r\n\r\n", "invalid_host"),
    ])
    func hostFaultsAre400AndCloseTheConnection(_ request: String, _ kind: String) async throws {
        let server = HTTPServer(
            configuration: .init(),
            errorRenderer: { context in
                HTTPResponse(status: context.status, body: Array((context.parseError?.shortDescription ?? "-").utf8))
            }, handler: Self.hostEcho)
        try server.start()
        let client = try TestClient(port: server.port)
        try client.send(request + "GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 400)
        #expect(response.bodyText == kind)
        #expect(response.header("Connection") == "close")
        #expect(client.waitForClose() == nil)  // the pipelined request behind it is not served
        #expect(server.counters().requests == 0)  // the handler saw neither request
        #expect(server.counters().badRequestsByStatus == [400: 1])
        await server.shutdown()
    }

    /// RFC 9112 §3.2.2: Host must be present, but an absolute-form target's authority wins.
    @Test func absoluteFormTargetsAuthorityReplacesHost() async throws {
        try await withHTTPServer(.init(), handler: Self.hostEcho) { server in
            let client = try TestClient(port: server.port)
            try client.send("GET http://example.test:8080/abs?q=1 HTTP/1.1\r\nHost: other\r\n\r\n")
            #expect(try client.readResponse().bodyText == "GET /abs?q=1 example.test:8080 ")
            try client.send("POST HTTP://example.test HTTP/1.1\r\nHost: example.test\r\n\r\n")
            #expect(try client.readResponse().bodyText == "POST / example.test ")
        }
    }
}
