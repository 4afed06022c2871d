import OptoLinkHTTP
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// At `maxConnections`, connections that hold a slot while making no progress on a request (a head
/// that never ends, a body that stalls, a slowloris trickle) do not lock new clients out until
/// their request timeout: the oldest unfinished request is answered 408 and its slot reused.
///
/// Every server here has a 30 s request timeout and every new client a 5 s receive timeout, so a
/// client served only after a 408 timeout fails. Serialized for the same reason as ``HTTPServerTests``.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct HTTPServerStalledRequestTests {
    /// A JSON body for the errors the server answers by itself, like the emulator's envelope.
    static let jsonRenderer: HTTPErrorRenderer = { context in
        HTTPResponse(
            status: context.status, headers: ["Content-Type": "application/json"],
            body: Array(
                #"{"statusCode":\#(context.status),"kind":"\#(context.parseError == nil ? "timeout" : "parse")"}"#.utf8)
        )
    }

    /// The only body a reclaimed connection may read: the 408 the request timeout would have sent.
    static let timeoutBody = #"{"statusCode":408,"kind":"timeout"}"#

    static func configuration(maxConnections: Int) -> HTTPServer.Configuration {
        HTTPServer.Configuration(
            loopCount: 1, timeouts: .init(idle: .seconds(60), request: .seconds(30)), maxConnections: maxConnections)
    }

    /// Runs `body` with a started one-loop server that renders its errors as JSON.
    static func withServer(
        maxConnections: Int, handler: @escaping HTTPHandler = echoHandler, _ body: (HTTPServer) async throws -> Void
    ) async throws {
        let server = HTTPServer(
            configuration: configuration(maxConnections: maxConnections), errorRenderer: jsonRenderer,
            handler: handler)
        try server.start()
        do {
            try await body(server)
            await server.shutdown()
        } catch {
            await server.shutdown()
            throw error
        }
    }

    /// Opens a connection that sends `payload` and then stalls.
    ///
    /// With `marker`, a complete `GET /marker` goes first in the same write and its answer is read:
    /// once it is back, the loop has read this payload and every byte sent before it on any
    /// connection (they were ready in the same or an earlier loop iteration), so a client that
    /// connects afterwards meets the stalled requests, not sockets the loop has yet to read.
    static func stalled(port: Int, _ payload: String, marker: Bool = false) throws -> TestClient {
        let client = try TestClient(port: port)
        if marker {
            try client.send("GET /marker HTTP/1.1\r\nHost: x\r\n\r\n" + payload)
            #expect(try client.readResponse().bodyText == "GET /marker ")
        } else {
            try client.send(payload)
        }
        return client
    }

    /// Expects the 408 with the renderer's body, `Connection: close`, then a clean EOF.
    static func expectReclaimed(_ client: TestClient, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let response = try client.readResponse()
            #expect(response.status == 408, sourceLocation: sourceLocation)
            #expect(response.header("Content-Type") == "application/json", sourceLocation: sourceLocation)
            #expect(response.bodyText == timeoutBody, sourceLocation: sourceLocation)
            #expect(response.header("Connection") == "close", sourceLocation: sourceLocation)
            #expect(client.waitForClose() == nil, sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected a 408 then EOF, got \(error)", sourceLocation: sourceLocation)
        }
    }

    /// A new client's request, answered within 5 s (far below the 30 s request timeout).
    ///
    /// The same write starts a next request that stalls, so the new client then holds its slot as
    /// the youngest unfinished request rather than as an idle connection (which would go first).
    static func served(port: Int, _ path: String) throws -> TestClient {
        let fresh = try TestClient(port: port, timeoutSeconds: 5)
        try fresh.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\n")
        #expect(try fresh.readResponse().bodyText == "GET \(path) ")
        return fresh
    }

    /// The issue's shape: every slot held by a partial head that then stalls.
    @Test func partialHeadsAtTheCapDoNotLockOutNewClients() async throws {
        try await Self.withServer(maxConnections: 8) { server in
            let head = "POST /sdk/events HTTP/1.1\r\nHost: x\r\n"
            var stalled = try (0..<7).map { _ in try Self.stalled(port: server.port, head) }
            stalled.append(try Self.stalled(port: server.port, head, marker: true))
            #expect(server.counters().connectionsOpen == 8)
            let served = try (0..<3).map { i in try Self.served(port: server.port, "/fresh/\(i)") }
            for client in stalled.prefix(3) { Self.expectReclaimed(client) }  // the oldest requests went
            let counters = server.counters()
            #expect(counters.connectionsReclaimedMidRequest == 3)
            #expect(counters.connectionsReclaimed == 0)
            #expect(counters.connectionsRejected == 0)
            #expect(counters.badRequestsByStatus[408] == 3)
            #expect(counters.requestTimeouts == 0)  // no timeout fired: these were reclaimed
            #expect(counters.connectionsOpen == 8)
            // The younger stalled requests were left alone and can still finish.
            try stalled[3].send("Content-Length: 2\r\n\r\nok")
            #expect(try stalled[3].readResponse().bodyText == "POST /sdk/events ok")
            withExtendedLifetime(served) {}  // each new client kept its slot throughout
        }
    }

    /// Kin the issue does not show: a body shorter than its Content-Length, a chunked body that
    /// stops mid-chunk or between chunks, and a head that stops after a few header lines.
    @Test(arguments: [
        ("POST /cl HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789", String(repeating: "x", count: 90)),
        ("POST /ch HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc", "defghijklmnop\r\n0\r\n\r\n"),
        ("POST /ch HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", "0\r\n\r\n"),
        ("GET /lines HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n", "X-B: 2\r\n\r\n"),
    ])
    func stalledBodiesAtTheCapAreReclaimedOldestFirst(_ partial: String, _ rest: String) async throws {
        try await Self.withServer(maxConnections: 4) { server in
            var stalled = try (0..<3).map { _ in try Self.stalled(port: server.port, partial) }
            stalled.append(try Self.stalled(port: server.port, partial, marker: true))
            let fresh = try Self.served(port: server.port, "/fresh")
            Self.expectReclaimed(stalled[0])
            #expect(server.counters().connectionsReclaimedMidRequest == 1)
            #expect(server.counters().connectionsRejected == 0)
            // The others kept their slot and their request.
            try stalled[1].send(rest)
            let finished = try stalled[1].readResponse()
            #expect(finished.status == 200)
            #expect(finished.bodyText.hasPrefix("POST /") || finished.bodyText.hasPrefix("GET /lines"))
            withExtendedLifetime(fresh) {}
        }
    }

    /// Ranked by the request's first byte, not by the last byte received: a slowloris that keeps
    /// trickling header bytes is still the oldest unfinished request.
    @Test func theOldestUnfinishedRequestGoesFirstEvenWhileItTrickles() async throws {
        try await Self.withServer(maxConnections: 4) { server in
            // Each marker is answered before the next step, so every step is read in a later loop
            // iteration than the one before: the loris starts first and has the most recent bytes.
            let loris = try Self.stalled(port: server.port, "GET /loris HTTP/1.1\r\n", marker: true)
            let b = try Self.stalled(port: server.port, "GET /b HTTP/1.1\r\nHost: x\r\n", marker: true)
            for line in ["Host: x\r\n", "X-1: a\r\n", "X-2: b\r\n"] { try loris.send(line) }
            let c = try Self.stalled(port: server.port, "GET /c HTTP/1.1\r\nHost: x\r\n", marker: true)
            let d = try Self.stalled(port: server.port, "GET /d HTTP/1.1\r\nHost: x\r\n", marker: true)
            let fresh = try Self.served(port: server.port, "/fresh")
            Self.expectReclaimed(loris)
            let next = try Self.served(port: server.port, "/next")
            Self.expectReclaimed(b)  // then the next oldest, not the youngest
            for (client, path) in [(c, "/c"), (d, "/d")] {
                try client.send("\r\n")
                #expect(try client.readResponse().bodyText == "GET \(path) ")
            }
            #expect(server.counters().connectionsReclaimedMidRequest == 2)
            withExtendedLifetime((fresh, next)) {}
        }
    }

    /// An idle connection is still taken before any connection that is receiving a request; once
    /// none is idle, the oldest unfinished request is.
    @Test func anIdleConnectionIsPreferredOverAStalledRequest() async throws {
        try await Self.withServer(maxConnections: 4) { server in
            let a = try Self.stalled(port: server.port, "GET /a HTTP/1.1\r\nHost: x\r\n")
            let idle = try TestClient(port: server.port)
            try idle.send("GET /idle HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try idle.readResponse().bodyText == "GET /idle ")
            let c = try Self.stalled(port: server.port, "GET /c HTTP/1.1\r\nHost: x\r\n")
            let d = try Self.stalled(port: server.port, "GET /d HTTP/1.1\r\nHost: x\r\n", marker: true)
            let fresh = try Self.served(port: server.port, "/fresh")
            #expect(throws: TestClientError.closed) { try idle.readResponse() }  // closed without a word
            #expect(server.counters().connectionsReclaimed == 1)
            #expect(server.counters().connectionsReclaimedMidRequest == 0)
            #expect(server.counters().badRequestsByStatus[408] == nil)
            // No idle one left: now the oldest unfinished request makes room.
            let next = try Self.served(port: server.port, "/next")
            Self.expectReclaimed(a)
            for (client, path) in [(c, "/c"), (d, "/d")] {
                try client.send("\r\n")
                #expect(try client.readResponse().bodyText == "GET \(path) ")
            }
            #expect(server.counters().connectionsReclaimed == 1)
            #expect(server.counters().connectionsReclaimedMidRequest == 1)
            withExtendedLifetime((fresh, next)) {}
        }
    }

    /// A complete request with the handler (a delayed response) or a response being written is never
    /// taken: with every slot in one of those states a new client is refused, and every one of them
    /// still gets its whole response. A stalled request among them is taken first.
    ///
    /// The handler runs on the loop thread and must not block, so "with the handler" across loop
    /// iterations is a delayed response (6 s here: longer than this test needs to reach the refusal).
    @Test func requestsWithTheHandlerOrBeingAnsweredAreNeverReclaimed() async throws {
        let big = [UInt8](repeating: 0x42, count: 32 << 20)  // more than loopback's socket buffers hold
        let handler: HTTPHandler = { request, info in
            switch request.path {
            case "/hold": .respondAfter(HTTPResponse(status: 200, body: Array("held".utf8)), delay: .seconds(6))
            case "/big": .respond(HTTPResponse(status: 200, body: big))
            default: echoHandler(request, info)
            }
        }
        try await Self.withServer(maxConnections: 4, handler: handler) { server in
            let held = try TestClient(port: server.port, timeoutSeconds: 20)
            try held.send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
            let writing = try TestClient(port: server.port, timeoutSeconds: 20)
            // Not read until the end; the unfinished request behind it must not expose it either.
            try writing.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /after-big HTTP/1.1\r\n")
            let pipelined = try TestClient(port: server.port, timeoutSeconds: 20)
            // Its first request is with the handler; the second, unfinished, must not expose it.
            try pipelined.send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\n")
            let stalled = try Self.stalled(port: server.port, "GET /s HTTP/1.1\r\nHost: x\r\n", marker: true)
            #expect(await eventually { server.counters().requests == 4 })  // with the marker

            let late = try TestClient(port: server.port, timeoutSeconds: 20)
            try late.send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")  // takes the stalled one's slot
            Self.expectReclaimed(stalled)
            #expect(await eventually { server.counters().requests == 5 })

            let refused = try TestClient(port: server.port, timeoutSeconds: 5)
            refused.sendIgnoringErrors("GET /refused HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(throws: (any Error).self) { try refused.readResponse() }
            let counters = server.counters()
            #expect(counters.connectionsRejected == 1)
            #expect(counters.connectionsReclaimedMidRequest == 1)
            #expect(counters.connectionsReclaimed == 0)

            for client in [held, late] { #expect(try client.readResponse().bodyText == "held") }
            #expect(try pipelined.readResponse().bodyText == "held")
            try pipelined.send("Host: x\r\n\r\n")
            #expect(try pipelined.readResponse().bodyText == "GET /after ")
            #expect(try writing.readResponse().body.count == big.count)
            try writing.send("Host: x\r\n\r\n")
            #expect(try writing.readResponse().bodyText == "GET /after-big ")
        }
    }
}
