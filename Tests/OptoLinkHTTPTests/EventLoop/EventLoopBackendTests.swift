import OptoLinkHTTP
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The two readiness backends: choosing one (configuration, `OPTOLINK_EVENT_LOOP`, platform default),
/// the portable `poll(2)` poller on its own, and a server on each backend over real sockets.
///
/// `.ci/run` also runs the whole HTTP and staging suites with `OPTOLINK_EVENT_LOOP=poll`, so every
/// other server test covers the portable backend too; these tests pin both regardless of the variable.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct EventLoopBackendTests {
    // MARK: - Choosing a backend

    @Test func unsetOrEmptyMeansThePlatformDefault() throws {
        #expect(try EventLoopBackend.resolve(environment: [:]) == .platformDefault)
        #expect(try EventLoopBackend.resolve(environment: ["OPTOLINK_EVENT_LOOP": ""]) == .platformDefault)
        #if os(Linux)
            #expect(EventLoopBackend.platformDefault == .epoll)
        #else
            #expect(EventLoopBackend.platformDefault == .poll)
        #endif
    }

    @Test(arguments: [("poll", EventLoopBackend.poll), ("POLL", .poll), ("epoll", .epoll)])
    func theVariableNamesTheBackend(value: String, expected: EventLoopBackend) throws {
        guard expected.isAvailable else { return }
        #expect(try EventLoopBackend.resolve(environment: ["OPTOLINK_EVENT_LOOP": value]) == expected)
    }

    /// Unknown names are refused with the variable and the value in the message, not ignored.
    @Test(arguments: ["kqueue", "select", "epol"])
    func anUnknownValueIsRefusedNamingIt(value: String) {
        do {
            _ = try EventLoopBackend.resolve(environment: ["OPTOLINK_EVENT_LOOP": value])
            Issue.record("\(value) was accepted")
        } catch {
            guard case .invalidConfiguration(let message) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(message.contains("OPTOLINK_EVENT_LOOP=\"\(value)\""))
            #expect(message.contains("\"poll\""))
        }
    }

    /// What `.ci/run` relies on: with the variable set, a default-configured server really runs it.
    @Test func aDefaultServerRunsTheBackendTheEnvironmentNames() async throws {
        let named = getenv("OPTOLINK_EVENT_LOOP").map { String(cString: $0) } ?? ""
        try await withHTTPServer(.init(loopCount: 1), handler: echoHandler) { server in
            let expected: EventLoopBackend = named == "poll" ? .poll : .platformDefault
            #expect(server.eventLoopBackend == expected)
            let client = try TestClient(port: server.port)
            try client.send("GET /which HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().bodyText == "GET /which ")
        }
    }

    @Test func aConfiguredBackendWinsOverTheEnvironment() async throws {
        let server = HTTPServer(configuration: .init(loopCount: 1, eventLoopBackend: .poll), handler: echoHandler)
        #expect(server.eventLoopBackend == nil)
        try server.start()
        #expect(server.eventLoopBackend == .poll)
        await server.shutdown()
    }

    // MARK: - A server on each backend

    static let available = EventLoopBackend.allCases.filter(\.isAvailable)

    /// Keep-alive, pipelining, a half-closed client, and descriptors: 3 per loop, 0 after shutdown.
    @Test(arguments: available)
    func eachBackendServesAndReleasesEverything(backend: EventLoopBackend) async throws {
        let server = HTTPServer(configuration: .init(loopCount: 2, eventLoopBackend: backend), handler: echoHandler)
        try server.start()
        #expect(server.descriptorsHeld() == 6)
        let client = try TestClient(port: server.port)
        for i in 0..<3 {
            try client.send("GET /k/\(i) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().bodyText == "GET /k/\(i) ")
        }
        // Two requests then FIN: both are answered before the server closes (the poll backend sees
        // the hang-up as readable and learns of it from read() returning 0, on every kernel).
        let halfClosed = try TestClient(port: server.port)
        try halfClosed.send(
            "GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nz")
        shutdown(halfClosed.fd, Int32(SHUT_WR))
        #expect(try halfClosed.readResponse().bodyText == "GET /a ")
        #expect(try halfClosed.readResponse().bodyText == "POST /b z")
        #expect(halfClosed.waitForClose() == nil)
        #expect(await eventually { server.counters().connectionsOpen == 1 })
        #expect(server.descriptorsHeld() == 7)
        await server.shutdown()
        #expect(server.descriptorsHeld() == 0)
    }

    /// More sockets ready at once than one wait reports (256): the rest are served on later waits.
    @Test(arguments: available)
    func moreReadySocketsThanOneWaitReportsAreAllServed(backend: EventLoopBackend) async throws {
        let configuration = HTTPServer.Configuration(loopCount: 1, eventLoopBackend: backend)
        try await withHTTPServer(configuration, handler: echoHandler) { server in
            var clients: [TestClient] = []
            for _ in 0..<300 { clients.append(try TestClient(port: server.port)) }
            #expect(await eventually { server.counters().connectionsOpen == 300 })
            for (i, client) in clients.enumerated() { try client.send("GET /r/\(i) HTTP/1.1\r\nHost: x\r\n\r\n") }
            for (i, client) in clients.enumerated() {
                #expect(try client.readResponse().bodyText == "GET /r/\(i) ")
            }
            #expect(server.counters().requests == 300)
        }
    }

    /// A response delayed on the loop's timer while the client has already sent FIN: the poll
    /// backend must neither spin on the sticky hang-up nor drop the connection before answering.
    @Test(arguments: available)
    func aDelayedAnswerReachesAHalfClosedClient(backend: EventLoopBackend) async throws {
        let handler: HTTPHandler = { request, _ in
            .respondAfter(HTTPResponse(status: 200, body: Array(request.path.utf8)), delay: .milliseconds(200))
        }
        let configuration = HTTPServer.Configuration(loopCount: 1, eventLoopBackend: backend)
        try await withHTTPServer(configuration, handler: handler) { server in
            let client = try TestClient(port: server.port)
            try client.send("GET /late HTTP/1.1\r\nHost: x\r\n\r\n")
            shutdown(client.fd, Int32(SHUT_WR))
            #expect(try client.readResponse().bodyText == "/late")
            #expect(client.waitForClose() == nil)
        }
    }

    // MARK: - The poll poller alone

    private func pipePair() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw TestClientError.system("pipe", errno) }
        return (fds[0], fds[1])
    }

    private func closeAll(_ pipes: [(read: Int32, write: Int32)]) {
        for pair in pipes {
            Glibc.close(pair.read)
            Glibc.close(pair.write)
        }
    }

    @Test func pollReportsReadableWithTheTokenAndForgetsRemovedEntries() throws {
        let poller = PollPoller()
        let pipes = try (0..<3).map { _ in try pipePair() }
        defer { closeAll(pipes) }
        for (i, pair) in pipes.enumerated() {
            #expect(poller.register(pair.read, interest: .readable, token: UInt64(100 + i)))
        }
        #expect(poller.wait(timeoutMilliseconds: 0) == 0)
        for pair in pipes { _ = write(pair.write, "x", 1) }
        poller.deregister(pipes[0].read)  // the last entry moves into its slot
        let count = poller.wait(timeoutMilliseconds: 0)
        let ready = (0..<count).map { poller.ready(at: $0) }
        #expect(Set(ready.map(\.token)) == [101, 102])
        #expect(ready.allSatisfy { $0.events == .readable })
        poller.update(pipes[2].read, interest: .readable, token: 7)
        let again = (0..<poller.wait(timeoutMilliseconds: 0)).map { poller.ready(at: $0).token }
        #expect(Set(again) == [101, 7])
    }

    /// A hang-up on a descriptor with no interest is not reported (it would make the loop spin);
    /// with interest it arrives as what the descriptor waits for.
    @Test func pollHangUpFollowsTheInterest() throws {
        let poller = PollPoller()
        let pair = try pipePair()
        defer { Glibc.close(pair.read) }
        Glibc.close(pair.write)  // the read end now reports POLLHUP
        #expect(poller.register(pair.read, interest: [], token: 1))
        #expect(poller.wait(timeoutMilliseconds: 0) == 0)
        poller.update(pair.read, interest: .readable, token: 1)
        #expect(poller.wait(timeoutMilliseconds: 0) == 1)
        #expect(poller.ready(at: 0).events == .readable)
    }

    /// 300 ready descriptors: one wait reports 256, the next starts with those not yet reported.
    @Test func pollRotatesPastItsPerWaitCapacity() throws {
        let poller = PollPoller()
        let pipes = try (0..<300).map { _ in try pipePair() }
        defer { closeAll(pipes) }
        for (i, pair) in pipes.enumerated() {
            _ = poller.register(pair.read, interest: .readable, token: UInt64(i))
            _ = write(pair.write, "x", 1)
        }
        let first = (0..<poller.wait(timeoutMilliseconds: 0)).map { poller.ready(at: $0).token }
        let second = (0..<poller.wait(timeoutMilliseconds: 0)).map { poller.ready(at: $0).token }
        #expect(first.count == 256)
        #expect(second.count == 256)
        #expect(Set(first).union(second).count == 300)
    }
}
