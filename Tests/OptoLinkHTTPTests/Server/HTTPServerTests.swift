import OptoLinkHTTP
import SoakSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The server over real sockets on 127.0.0.1:0 (and ::1 when available).
///
/// Serialized: the blocking test clients occupy cooperative threads, which would otherwise skew
/// the timing-sensitive cases (delays, timeouts, shutdown) of tests running beside them.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct HTTPServerTests {
    @Test func keepAliveReusesOneConnection() async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            #expect(server.port > 0)
            let client = try TestClient(port: server.port)
            for i in 0..<3 {
                try client.send("GET /hello/\(i) HTTP/1.1\r\nHost: x\r\n\r\n")
                let response = try client.readResponse()
                #expect(response.status == 200)
                #expect(response.bodyText == "GET /hello/\(i) ")
                #expect(response.header("Connection") == nil)
                #expect(response.header("Date")?.hasSuffix(" GMT") == true)
            }
            let counters = server.counters()
            #expect(counters.connectionsAccepted == 1)
            #expect(counters.connectionsOpen == 1)
            #expect(counters.requests == 3)
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            let client = try TestClient(port: server.port)
            try client.send(
                "GET /1 HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "POST /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody"
                    + "HEAD /3 HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /4 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(try client.readResponse().bodyText == "GET /1 ")
            #expect(try client.readResponse().bodyText == "POST /2 body")
            let head = try client.readResponse(forHead: true)
            #expect(head.header("Content-Length") == "8")  // the length GET would have had
            let last = try client.readResponse()
            #expect(last.bodyText == "GET /4 ")
            #expect(last.header("Connection") == "close")
            #expect(client.waitForClose() == nil)
        }
    }

    @Test(arguments: [
        ("GARBAGE\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "a", count: 17_000) + "\r\n\r\n", 431),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", 413),
        (
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            400
        ),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
        ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n\r\n", 400),  // no Host (RFC 9112 §3.2)
        ("GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\nHost: x y\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
    ])
    func hostileRequestIsAnsweredAndOthersStillServed(_ request: String, _ status: Int) async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            let bystander = try TestClient(port: server.port)
            try bystander.send("GET /before HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try bystander.readResponse().status == 200)

            let hostile = try TestClient(port: server.port)
            try hostile.send(request)
            let response = try hostile.readResponse()
            #expect(response.status == status)
            #expect(response.header("Connection") == "close")
            #expect(hostile.waitForClose() == nil)

            try bystander.send("GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try bystander.readResponse().bodyText == "GET /after ")
            let fresh = try TestClient(port: server.port)
            try fresh.send("GET /fresh HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try fresh.readResponse().status == 200)
            #expect(server.counters().badRequestsByStatus == [status: 1])
        }
    }

    @Test func oversizedBodyStillGets413WhileTheClientKeepsSending() async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            let client = try TestClient(port: server.port)
            try client.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 3000000\r\n\r\n")
            client.sendIgnoringErrors(String(repeating: "z", count: 200_000))  // lingering close drains this
            #expect(try client.readResponse().status == 413)
        }
    }

    @Test(arguments: [
        "GET /slow HTTP/1.1\r\nHo",  // a head that never ends
        "POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc",  // a body that never ends
    ])
    func slowClientGets408AfterTheRequestTimeout(_ partial: String) async throws {
        let configuration = HTTPServer.Configuration(timeouts: .init(idle: .seconds(30), request: .milliseconds(300)))
        try await withHTTPServer(configuration, handler: echoHandler) { server in
            let client = try TestClient(port: server.port)
            let started = ContinuousClock.now
            try client.send(partial)
            let response = try client.readResponse()
            let waited = ContinuousClock.now - started
            #expect(response.status == 408)
            #expect(response.header("Connection") == "close")
            #expect(waited >= .milliseconds(250) && waited < .seconds(5))
            #expect(client.waitForClose() == nil)
            #expect(server.counters().requestTimeouts == 1)
            #expect(server.counters().badRequestsByStatus[408] == 1)
            #expect(server.counters().requests == 0)
        }
    }

    @Test func clientGoneBeforeItsDelayedResponseIsCleanedUp() async throws {
        let handler: HTTPHandler = { _, _ in .respondAfter(HTTPResponse(status: 200), delay: .milliseconds(200)) }
        try await withHTTPServer(.init(), handler: handler) { server in
            for i in 1...5 {
                let client = try TestClient(port: server.port)
                try client.send("GET /later HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(await eventually { server.counters().requests == i })  // the handler has it
                client.reset()
            }
            #expect(await eventually { server.counters().connectionsOpen == 0 })
            #expect(server.descriptorsHeld() == 3 * server.configuration.loopCount)
        }
    }

    @Test func idleKeepAliveConnectionIsClosed() async throws {
        let configuration = HTTPServer.Configuration(timeouts: .init(idle: .milliseconds(200), request: .seconds(30)))
        try await withHTTPServer(configuration, handler: echoHandler) { server in
            let client = try TestClient(port: server.port)
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            #expect(client.waitForClose() == nil)
            #expect(server.counters().idleTimeouts == 1)
            #expect(await eventually { server.counters().connectionsOpen == 0 })
        }
    }

    @Test func clientResetMidRequestIsDroppedCleanly() async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            for _ in 0..<20 {
                let client = try TestClient(port: server.port)
                try client.send("POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\npartial")
                client.reset()
            }
            #expect(await eventually { server.counters().connectionsOpen == 0 })
            let other = try TestClient(port: server.port)
            try other.send("GET /still HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try other.readResponse().status == 200)
            #expect(server.counters().requests == 1)
        }
    }

    @Test func delayedResponseDoesNotBlockOtherClients() async throws {
        let handler: HTTPHandler = { request, _ in
            let response = HTTPResponse(status: 200, body: Array(request.path.utf8))
            return request.path == "/slow" ? .respondAfter(response, delay: .milliseconds(800)) : .respond(response)
        }
        try await withHTTPServer(.init(), handler: handler) { server in
            let clock = ContinuousClock()
            let started = clock.now
            let slow = try TestClient(port: server.port)
            try slow.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
            let fast = try TestClient(port: server.port)
            try fast.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try fast.readResponse().bodyText == "/fast")
            #expect(clock.now - started < .milliseconds(600))
            #expect(try slow.readResponse().bodyText == "/slow")
            #expect(clock.now - started >= .milliseconds(790))
        }
    }

    @Test func pipelinedRequestBehindADelayedOneWaitsItsTurn() async throws {
        let handler: HTTPHandler = { request, _ in
            let response = HTTPResponse(status: 200, body: Array(request.path.utf8))
            return request.path == "/slow" ? .respondAfter(response, delay: .milliseconds(200)) : .respond(response)
        }
        try await withHTTPServer(.init(), handler: handler) { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().bodyText == "/slow")
            #expect(try client.readResponse().bodyText == "/fast")
        }
    }

    @Test func resetResultIsSeenAsConnectionReset() async throws {
        let handler: HTTPHandler = { request, _ in
            request.path == "/reset" ? .reset : .respond(HTTPResponse(status: 200))
        }
        try await withHTTPServer(.init(), handler: handler) { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /reset HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(throws: TestClientError.reset) { try client.readResponse() }
            #expect(server.counters().resets == 1)
            let other = try TestClient(port: server.port)
            try other.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try other.readResponse().status == 200)
        }
    }

    @Test func closeResultEndsTheConnectionWithNoResponse() async throws {
        let handler: HTTPHandler = { request, _ in
            request.path == "/close" ? .close : .respond(HTTPResponse(status: 200, body: Array(request.path.utf8)))
        }
        try await withHTTPServer(.init(), handler: handler) { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /close HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(throws: TestClientError.closed) { try client.readResponse() }
            #expect(server.counters().closedWithoutResponse == 1)
            #expect(server.counters().resets == 0, "an orderly close, not a reset")
            // Pipelined: the answer to the request before it still arrives, nothing after it does.
            let pipelined = try TestClient(port: server.port)
            try pipelined.send(
                "GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /close HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /never HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try pipelined.readResponse().bodyText == "/first")
            #expect(throws: TestClientError.closed) { try pipelined.readResponse() }
            #expect(server.counters().requests == 3, "/never was not handled")
        }
    }

    @Test func servesIPv6LoopbackWhenAvailable() async throws {
        let server = HTTPServer(configuration: .init(host: "::1"), handler: echoHandler)
        do {
            try server.start()
        } catch HTTPServerError.systemCall(_, let code) where code == EADDRNOTAVAIL || code == EAFNOSUPPORT {
            return  // no IPv6 loopback on this machine
        }
        let client = try TestClient(host: "::1", port: server.port)
        try client.send("GET /v6 HTTP/1.1\r\nHost: [::1]\r\n\r\n")
        let response = try client.readResponse()
        await server.shutdown()
        #expect(response.bodyText == "GET /v6 ")
    }

    @Test func peerInfoReachesTheHandler() async throws {
        let handler: HTTPHandler = { _, info in
            .respond(
                HTTPResponse(
                    status: 200, body: Array("\(info.peerAddress) \(info.peerPort > 0) \(info.connectionId)".utf8)))
        }
        try await withHTTPServer(.init(), handler: handler) { server in
            let first = try TestClient(port: server.port)
            try first.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try first.readResponse().bodyText == "127.0.0.1 true 1")
            let second = try TestClient(port: server.port)
            try second.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try second.readResponse().bodyText == "127.0.0.1 true 2")
        }
    }

    @Test func http10ClosesUnlessKeepAliveAsked() async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            let plain = try TestClient(port: server.port)
            try plain.send("GET /a HTTP/1.0\r\n\r\n")
            #expect(try plain.readResponse().header("Connection") == "close")
            #expect(plain.waitForClose() == nil)

            let persistent = try TestClient(port: server.port)
            try persistent.send("GET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try persistent.readResponse().header("Connection") == "keep-alive")
            try persistent.send("GET /c HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            #expect(try persistent.readResponse().bodyText == "GET /c ")
        }
    }

    @Test func halfClosedClientStillGetsItsResponse() async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /half HTTP/1.1\r\nHost: x\r\n\r\n")
            shutdown(client.fd, Int32(SHUT_WR))
            #expect(try client.readResponse().bodyText == "GET /half ")
            #expect(client.waitForClose() == nil)

            // Pipelined requests with large answers, then FIN: every one is still answered.
            let pipelining = try TestClient(port: server.port)
            let body = String(repeating: "p", count: 100_000)
            let requests = (0..<6).map {
                "POST /big/\($0) HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            }
            try pipelining.send(requests.joined())
            shutdown(pipelining.fd, Int32(SHUT_WR))
            for i in 0..<6 { #expect(try pipelining.readResponse().bodyText == "POST /big/\(i) \(body)") }
            #expect(pipelining.waitForClose() == nil)
        }
    }

    @Test func largeResponsesSurvivePartialWrites() async throws {
        let big = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let handler: HTTPHandler = { request, _ in
            .respond(HTTPResponse(status: 200, body: request.method == "POST" ? Array(request.body.reversed()) : big))
        }
        try await withHTTPServer(.init(), handler: handler) { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().body == big)
            #expect(try client.readResponse().body == big)
            let upload = Array(big.prefix(1 << 20))
            try client.send(
                Array("POST /c HTTP/1.1\r\nHost: x\r\nContent-Length: \(upload.count)\r\n\r\n".utf8) + upload)
            #expect(try client.readResponse().body == upload.reversed())
        }
    }

    @Test func expectContinueGetsAnInterimResponse() async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            let client = try TestClient(port: server.port)
            try client.send("POST /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
            #expect(try client.readResponse().status == 100)
            try client.send("hello")
            #expect(try client.readResponse().bodyText == "POST /e hello")
        }
    }

    @Test func clientThatStopsReadingIsClosedAfterTheRequestTimeout() async throws {
        let big = [UInt8](repeating: 0x42, count: 16 << 20)
        let configuration = HTTPServer.Configuration(timeouts: .init(request: .milliseconds(300)))
        try await withHTTPServer(configuration, handler: { _, _ in .respond(HTTPResponse(status: 200, body: big)) }) {
            server in
            let client = try TestClient(port: server.port)
            try client.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")  // and never read
            #expect(await eventually { server.counters().requestTimeouts == 1 })
            #expect(await eventually { server.counters().connectionsOpen == 0 })
        }
    }

    @Test func everyDescriptorIsClosedExactlyOnce() async throws {
        let handler: HTTPHandler = { request, _ in
            switch request.path {
            case "/reset": .reset
            case "/slow": .respondAfter(HTTPResponse(status: 200), delay: .milliseconds(50))
            default: .respond(HTTPResponse(status: 200))
            }
        }
        let processBefore = openDescriptorCount()
        let server = HTTPServer(configuration: .init(loopCount: 2), handler: handler)
        try server.start()
        #expect(server.descriptorsHeld() == 6)  // per loop: listener + epoll set + eventfd, or listener + pipe
        for path in ["/", "/reset", "/slow", "/", "/slow"] {
            let client = try TestClient(port: server.port)
            client.sendIgnoringErrors("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
            _ = try? client.readResponse()
        }
        let bad = try TestClient(port: server.port)
        bad.sendIgnoringErrors("BAD\r\n\r\n")
        _ = bad.waitForClose()
        let reset = try TestClient(port: server.port)
        reset.sendIgnoringErrors("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /x HT")
        reset.reset()
        let idle = try TestClient(port: server.port)
        idle.sendIgnoringErrors("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = try idle.readResponse()
        #expect(await eventually { server.descriptorsHeld() == 6 + server.counters().connectionsOpen })
        await server.shutdown()
        #expect(server.descriptorsHeld() == 0)
        #expect(server.counters().connectionsOpen == 0)
        if processWideTestsEnabled {
            #expect(openDescriptorCount() == processBefore + 3)  // only the clients `bad`, `reset` and `idle` remain
        }
    }

    @Test func atTheCapTheLongestIdleConnectionMakesRoom() async throws {
        try await withHTTPServer(.init(loopCount: 1, maxConnections: 2), handler: echoHandler) { server in
            let a = try TestClient(port: server.port)
            let b = try TestClient(port: server.port)
            for client in [a, b] {
                try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try client.readResponse().status == 200)
            }
            let c = try TestClient(port: server.port)
            try c.send("GET /c HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try c.readResponse().bodyText == "GET /c ")
            #expect(a.waitForClose() == nil)  // the longest idle one was reclaimed
            try b.send("GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try b.readResponse().bodyText == "GET /b ")
            #expect(server.counters().connectionsReclaimed == 1)
            #expect(server.counters().connectionsRejected == 0)
        }
    }

    @Test func silentConnectionsDoNotLockOutNewClients() async throws {
        // Every slot held by a connection that never sends a byte (the lock-out seen at 16,384).
        let configuration = HTTPServer.Configuration(
            loopCount: 1, timeouts: .init(idle: .seconds(60), request: .seconds(30)), maxConnections: 8)
        try await withHTTPServer(configuration, handler: echoHandler) { server in
            let silent = try (0..<8).map { _ in try TestClient(port: server.port) }
            #expect(await eventually { server.counters().connectionsOpen == 8 })
            var served: [TestClient] = []  // kept open, so each new client needs a reclaimed slot
            for i in 0..<3 {
                let fresh = try TestClient(port: server.port)
                try fresh.send("GET /fresh/\(i) HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try fresh.readResponse().bodyText == "GET /fresh/\(i) ")
                served.append(fresh)
            }
            #expect(server.counters().connectionsReclaimed == 3)
            #expect(server.counters().connectionsRejected == 0)
            #expect(silent.prefix(3).allSatisfy { $0.waitForClose() == nil })  // the oldest silent ones went
        }
    }

    @Test func aSilentConnectionGetsTheRequestTimeoutNotTheIdleOne() async throws {
        let configuration = HTTPServer.Configuration(timeouts: .init(idle: .seconds(60), request: .milliseconds(300)))
        try await withHTTPServer(configuration, handler: echoHandler) { server in
            let silent = try TestClient(port: server.port)
            #expect(silent.waitForClose() == nil)  // closed without an answer, long before 60 s
            #expect(server.counters().requestTimeouts == 1)
            #expect(server.counters().idleTimeouts == 0)
            #expect(server.counters().badRequests == 0)
        }
    }

    @Test func protocolErrorsUseTheGivenRenderer() async throws {
        let server = HTTPServer(
            configuration: .init(timeouts: .init(request: .milliseconds(300))),
            errorRenderer: { context in
                let kind = context.parseError?.shortDescription ?? "timeout"
                return HTTPResponse(
                    status: 599, headers: ["Content-Type": "application/json", "Content-Length": "1"],
                    body: Array("{\"status\":\(context.status),\"kind\":\"\(kind)\"}".utf8))
            }, handler: echoHandler)
        try server.start()
        for (request, status, kind) in [
            ("GET / HTTP/1.1\r\n\r\n", 400, "missing_host"),
            ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "multiple_hosts"),
            ("GET / HTTP/3.0\r\nHost: x\r\n\r\n", 505, "unsupported_version"),
            ("GET / HTTP/1.1\r\nHo", 408, "timeout"),
        ] {
            let client = try TestClient(port: server.port)
            try client.send(request)
            let response = try client.readResponse()
            #expect(response.status == status)  // the server keeps its status whatever the renderer says
            #expect(response.header("Content-Type") == "application/json")
            #expect(response.bodyText == "{\"status\":\(status),\"kind\":\"\(kind)\"}")
            #expect(response.header("Connection") == "close")
        }
        await server.shutdown()
    }

    @Test func chunkedRequestBodyReachesTheHandlerAndTheConnectionStaysUsable() async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            let client = try TestClient(port: server.port)
            try client.send("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n")
            try client.send("A\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n")
            #expect(try client.readResponse().bodyText == "POST /c abc0123456789")
            try client.send("GET /next HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().bodyText == "GET /next ")
            try client.send(
                "POST /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n")
            #expect(try client.readResponse().status == 100)
            try client.send("2\r\nhi\r\n0\r\n\r\n")
            #expect(try client.readResponse().bodyText == "POST /e hi")
        }
    }

    @Test func thousandConcurrentConnectionsAreServed() async throws {
        let configuration = HTTPServer.Configuration(loopCount: 2)
        try await withHTTPServer(configuration, handler: echoHandler) { server in
            var clients: [TestClient] = []
            for _ in 0..<1000 { clients.append(try TestClient(port: server.port)) }
            for (i, client) in clients.enumerated() { try client.send("GET /c/\(i) HTTP/1.1\r\nHost: x\r\n\r\n") }
            for (i, client) in clients.enumerated() {
                #expect(try client.readResponse().bodyText == "GET /c/\(i) ")
            }
            let counters = server.counters()
            #expect(counters.connectionsAccepted == 1000)
            #expect(counters.connectionsOpen == 1000)
            #expect(counters.requests == 1000)
            #expect(server.counters().connectionsRejected == 0)
        }
    }
}
