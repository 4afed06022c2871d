import OptoLinkHTTP
import SoakSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The server's lifecycle (start, graceful shutdown, descriptors) and its resilience to garbage
/// and to running out of descriptors; part of ``HTTPServerTests`` and serialized with it.
extension HTTPServerTests {
    @Test func gracefulShutdownClosesIdleAndFinishesDelayed() async throws {
        let handler: HTTPHandler = { request, _ in
            let response = HTTPResponse(status: 200, body: Array(request.path.utf8))
            // Long enough that the shutdown below surely starts while this response is still delayed.
            return request.path == "/slow" ? .respondAfter(response, delay: .milliseconds(2500)) : .respond(response)
        }
        let configuration = HTTPServer.Configuration(loopCount: 2, timeouts: .init(shutdownGrace: .seconds(20)))
        let server = HTTPServer(configuration: configuration, handler: handler)
        try server.start()
        let port = server.port
        var idle: [TestClient] = []
        for _ in 0..<3 {
            let client = try TestClient(port: port)
            try client.send("GET /idle HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            idle.append(client)
        }
        let inFlight = try TestClient(port: port)
        try inFlight.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await eventually { server.counters().requests == 4 })

        await server.shutdown()
        for client in idle { #expect(client.waitForClose() == nil) }
        let last = try inFlight.readResponse()
        #expect(last.bodyText == "/slow")
        #expect(last.header("Connection") == "close")
        #expect(throws: TestClientError.self) { try TestClient(port: port) }  // nobody listens any more
        await server.shutdown()  // idempotent
    }

    @Test func shutdownClosesStragglersAfterTheGrace() async throws {
        let handler: HTTPHandler = { _, _ in .respondAfter(HTTPResponse(status: 200), delay: .seconds(30)) }
        let configuration = HTTPServer.Configuration(timeouts: .init(shutdownGrace: .milliseconds(200)))
        let server = HTTPServer(configuration: configuration, handler: handler)
        try server.start()
        let client = try TestClient(port: server.port)
        try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await eventually { server.counters().requests == 1 })
        let clock = ContinuousClock()
        let started = clock.now
        await server.shutdown()
        #expect(clock.now - started < .seconds(5))
        #expect(throws: TestClientError.closed) { try client.readResponse() }
    }

    @Test func withHTTPServerShutsDownWhenTheBodyThrows() async throws {
        struct Boom: Error {}
        var port = 0
        await #expect(throws: Boom.self) {
            try await withHTTPServer(.init(), handler: echoHandler) { server in
                port = server.port
                throw Boom()
            }
        }
        #expect(port > 0)
        #expect(throws: TestClientError.self) { try TestClient(port: port) }
    }

    /// SO_REUSEPORT between our own loops must not let a second server share a port in use.
    @Test(arguments: [(1, 1), (1, 2), (2, 1), (2, 2), (3, 2)])
    func aPortInUseIsRefused(_ runningLoops: Int, _ newLoops: Int) async throws {
        try await withHTTPServer(.init(loopCount: runningLoops), handler: echoHandler) { server in
            let clash = HTTPServer(configuration: .init(port: server.port, loopCount: newLoops), handler: echoHandler)
            #expect(throws: HTTPServerError.systemCall("bind", errno: EADDRINUSE)) { try clash.start() }
            let client = try TestClient(port: server.port)
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
        }
    }

    @Test func startErrors() async throws {
        let server = HTTPServer(handler: echoHandler)
        try server.start()
        #expect(throws: HTTPServerError.alreadyStarted) { try server.start() }
        let clash = HTTPServer(configuration: .init(port: server.port), handler: echoHandler)
        #expect(throws: HTTPServerError.systemCall("bind", errno: EADDRINUSE)) { try clash.start() }
        await server.shutdown()
        #expect(throws: HTTPServerError.alreadyStarted) { try server.start() }
        #expect(throws: HTTPServerError.invalidHost("example.com")) {
            try HTTPServer(configuration: .init(host: "example.com"), handler: echoHandler).start()
        }
        #expect(throws: HTTPServerError.invalidConfiguration("loopCount < 1")) {
            try HTTPServer(configuration: .init(loopCount: 0), handler: echoHandler).start()
        }
    }
}

extension HTTPServerTests {
    @Test func garbageOnManyConnectionsLeavesTheServerServing() async throws {
        var random = SplitMix64(seed: 99)
        try await withHTTPServer(.init(timeouts: .init(request: .milliseconds(500))), handler: echoHandler) { server in
            var clients: [TestClient] = []
            for _ in 0..<50 {
                let client = try TestClient(port: server.port, timeoutSeconds: 5)
                let noise = (0..<Int.random(in: 1..<3000, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
                _ = try? client.send(noise)
                clients.append(client)
            }
            // Each one gets an error status (or, for input that never completes a head, a 408) and a close.
            for client in clients {
                if let response = try? client.readResponse() {
                    #expect([400, 408, 431, 505].contains(response.status))
                }
                _ = client.waitForClose()
            }
            #expect(await eventually { server.counters().connectionsOpen == 0 })
            let good = try TestClient(port: server.port)
            try good.send("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try good.readResponse().bodyText == "GET /ok ")
        }
    }
}

extension HTTPServerTests {
    /// Out of descriptors, the loop stops polling its listener (instead of spinning on it) and
    /// resumes accepting once descriptors are free again; queued clients are then served.
    ///
    /// It lowers RLIMIT_NOFILE for the whole process, so it runs only when
    /// `OPTOLINK_HTTP_PROCESS_WIDE_TESTS=1` (e.g. `swift test --filter OptoLinkHTTPTests`), never beside other targets.
    @Test(.enabled(if: processWideTestsEnabled))
    func acceptResumesAfterRunningOutOfDescriptors() async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            var clients: [TestClient] = []
            for _ in 0..<20 { clients.append(try TestClient(port: server.port, connectNow: false)) }
            var original = rlimit()
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &original)
            var tight = original
            tight.rlim_cur = rlim_t(openDescriptorCount())
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &tight)
            defer { setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &original) }
            for client in clients { try client.connect() }  // completes in the kernel backlog
            for (i, client) in clients.enumerated() { try client.send("GET /q/\(i) HTTP/1.1\r\nHost: x\r\n\r\n") }
            try await Task.sleep(for: .milliseconds(150))  // let the loop hit EMFILE and pause
            let acceptedWhileTight = server.counters().connectionsAccepted
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &original)
            #expect(acceptedWhileTight < clients.count)
            for (i, client) in clients.enumerated() {
                #expect(try client.readResponse().bodyText == "GET /q/\(i) ")
            }
            #expect(server.counters().connectionsAccepted == clients.count)
        }
    }
}

extension HTTPServerTests {
    @Test func droppedWithoutShutdownStillStopsListening() async throws {
        var port = 0
        let processBefore = openDescriptorCount()
        do {
            let server = HTTPServer(handler: echoHandler)
            try server.start()
            port = server.port
            let client = try TestClient(port: port)
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
        }
        #expect(
            await eventually {
                (try? TestClient(port: port)) == nil
            })
        if processWideTestsEnabled {
            #expect(await eventually { openDescriptorCount() == processBefore })  // eventfd included
        }
    }

    @Test func moreLoopsThanCoresShareTheWork() async throws {
        try await withHTTPServer(.init(loopCount: 4), handler: echoHandler) { server in
            var clients: [TestClient] = []
            for _ in 0..<64 { clients.append(try TestClient(port: server.port)) }
            for (i, client) in clients.enumerated() { try client.send("GET /\(i) HTTP/1.1\r\nHost: x\r\n\r\n") }
            for (i, client) in clients.enumerated() { #expect(try client.readResponse().bodyText == "GET /\(i) ") }
            #expect(server.descriptorsHeld() == 4 * 3 + 64)
        }
    }
}
