import CEpoll
import OptoLinkHTTP
import SoakSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The native client against real local servers: every failure kind it classifies is produced by
/// a socket doing exactly that, on both readiness backends.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct HTTPClientTests {
    static let backends = EventLoopBackend.allCases.filter(\.isAvailable)

    private func get(_ port: Int, _ target: String = "/", partition: String? = nil) -> HTTPClientRequest {
        HTTPClientRequest(method: "GET", host: "127.0.0.1", port: port, target: target, partition: partition)
    }

    /// The error `execute` threw, or `nil` when it returned a response.
    private func failure(
        _ client: HTTPClient, _ request: HTTPClientRequest, timeout: Duration = .seconds(5)
    ) async -> HTTPClientError? {
        do {
            _ = try await client.execute(request, timeout: timeout)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: backends)
    func keepAliveCarriesRequestsOverOneConnection(_ backend: EventLoopBackend) async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            try await withClient(backend) { client in
                for i in 0..<5 {
                    var request = get(server.port, "/k/\(i)?q=\(i)")
                    if i % 2 == 1 {
                        request.method = "POST"
                        request.body = Array("body \(i)".utf8)
                        request.headers = ["Content-Type": "text/plain"]
                    }
                    let response = try await client.execute(request, timeout: .seconds(5))
                    #expect(response.status == 200)
                    let expected = i % 2 == 1 ? "POST /k/\(i)?q=\(i) body \(i)" : "GET /k/\(i)?q=\(i) "
                    #expect(String(decoding: response.body, as: UTF8.self) == expected)
                }
                #expect(server.counters().connectionsAccepted == 1)
                #expect(server.counters().requests == 5)
            }
        }
    }

    @Test(arguments: backends)
    func aNameWhoseFirstAddressRefusesFallsBackToTheNext(_ backend: EventLoopBackend) async throws {
        // `localhost` on a dual-stack machine: `::1` first, where nothing listens, then 127.0.0.1.
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            var configuration = HTTPClient.Configuration()
            configuration.addressOverrides = ["dual.test": ["::1", "127.0.0.1"]]
            try await withClient(backend, configuration) { client in
                for i in 0..<3 {
                    let request = HTTPClientRequest(
                        method: "GET", host: "dual.test", port: server.port, target: "/\(i)")
                    let response = try await client.execute(request, timeout: .seconds(5))
                    #expect(response.status == 200)
                    #expect(String(decoding: response.body, as: UTF8.self) == "GET /\(i) ")
                }
                // Sent once each, over the one connection the fallback made (kept alive).
                #expect(server.counters().requests == 3)
                #expect(server.counters().connectionsAccepted == 1)
            }
        }
    }

    @Test(arguments: backends)
    func aNameWhoseEveryAddressRefusesIsRefused(_ backend: EventLoopBackend) async throws {
        let probe = try ListeningSocket.open(host: "127.0.0.1", port: 0, reusePort: false, backlog: 1, portable: true)
        close(probe.fd)
        var configuration = HTTPClient.Configuration()
        configuration.addressOverrides = ["dual.test": ["::1", "127.0.0.1"]]
        try await withClient(backend, configuration) { client in
            let request = HTTPClientRequest(method: "GET", host: "dual.test", port: probe.port, target: "/")
            #expect(await failure(client, request) == .connectionRefused)
        }
    }

    /// A server listening on `::1` only, reached as `::1` and as `localhost` (tried as 127.0.0.1
    /// first, where nothing listens, then as ::1).
    @Test(arguments: backends, ["::1", "localhost"])
    func anIPv6OnlyServerIsReached(_ backend: EventLoopBackend, host: String) async throws {
        try await withHTTPServer(.init(host: "::1"), handler: echoHandler) { server in
            try await withClient(backend) { client in
                let request = HTTPClientRequest(method: "GET", host: host, port: server.port, target: "/v6")
                let response = try await client.execute(request, timeout: .seconds(5))
                #expect(response.status == 200)
                #expect(String(decoding: response.body, as: UTF8.self) == "GET /v6 ")
            }
        }
    }

    @Test(arguments: backends)
    func refusedConnectionIsClassified(_ backend: EventLoopBackend) async throws {
        // A port that was just free: bind, read it back, close, then nothing listens there.
        let probe = try ListeningSocket.open(host: "127.0.0.1", port: 0, reusePort: false, backlog: 1, portable: true)
        close(probe.fd)
        try await withClient(backend) { client in
            #expect(await failure(client, get(probe.port)) == .connectionRefused)
        }
    }

    @Test(arguments: backends)
    func resetBeforeAnyByteIsConnectionResetAndNeverResent(_ backend: EventLoopBackend) async throws {
        let server = try ScriptedServer { peer, _ in
            peer.readRequest()
            peer.reset()
        }
        defer { server.stop() }
        try await withClient(backend) { client in
            var request = get(server.port, "/match")
            request.method = "POST"
            request.body = Array(#"{"deviceId":"d"}"#.utf8)
            #expect(await failure(client, request) == .connectionReset)
            // The phantom request of the URLSession path: nothing else may reach the server.
            try await Task.sleep(for: .milliseconds(300))
            #expect(server.requests.load(ordering: .relaxed) == 1)
            #expect(server.connections.load(ordering: .relaxed) == 1)
            #expect(server.requestTexts.first?.hasSuffix(#"{"deviceId":"d"}"#) == true)
        }
    }

    @Test(arguments: backends)
    func resetMidBodyIsConnectionReset(_ backend: EventLoopBackend) async throws {
        let server = try ScriptedServer { peer, _ in
            peer.readRequest()
            peer.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b")
            usleep(50_000)
            peer.reset()
        }
        defer { server.stop() }
        try await withClient(backend) { client in
            #expect(await failure(client, get(server.port)) == .connectionReset)
        }
    }

    @Test(arguments: backends)
    func closedMidBodyIsConnectionClosed(_ backend: EventLoopBackend) async throws {
        let server = try ScriptedServer { peer, _ in
            peer.readRequest()
            peer.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel")
            peer.close()
        }
        defer { server.stop() }
        try await withClient(backend) { client in
            #expect(await failure(client, get(server.port)) == .connectionClosed)
        }
    }

    @Test(arguments: backends)
    func tricklePastTheDeadlineTimesOutAndClosesTheSocket(_ backend: EventLoopBackend) async throws {
        let server = try ScriptedServer { peer, _ in
            peer.readRequest()
            peer.write("HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n")
            for _ in 0..<40 {
                peer.write("x")  // one byte every 100 ms: never idle long, never done in time
                usleep(100_000)
                if peer.fd < 0 { return }
            }
        }
        defer { server.stop() }
        try await withClient(backend) { client in
            let started = ContinuousClock.now
            #expect(await failure(client, get(server.port), timeout: .milliseconds(400)) == .timedOut)
            #expect(ContinuousClock.now - started < .seconds(3))  // not the 4 s the trickle would take
        }
    }

    @Test(arguments: backends)
    func aServerThatNeverAnswersTimesOutBelowOneSecondAndSeesTheClose(_ backend: EventLoopBackend) async throws {
        let server = try ScriptedServer { peer, _ in
            peer.readRequest()
            peer.awaitClientClose()
        }
        defer { server.stop() }
        try await withClient(backend) { client in
            #expect(await failure(client, get(server.port), timeout: .milliseconds(250)) == .timedOut)
            #expect(await eventually { server.clientCloses.load(ordering: .relaxed) == 1 })
        }
    }

    @Test(arguments: backends)
    func cancellationClosesTheSocketAtOnce(_ backend: EventLoopBackend) async throws {
        let server = try ScriptedServer { peer, _ in
            peer.readRequest()
            peer.awaitClientClose()
        }
        defer { server.stop() }
        try await withClient(backend) { client in
            let port = server.port
            let task = Task { await failure(client, get(port), timeout: .seconds(30)) }
            #expect(await eventually { server.requests.load(ordering: .relaxed) == 1 })
            task.cancel()
            #expect(await task.value == .cancelled)
            #expect(await eventually { server.clientCloses.load(ordering: .relaxed) == 1 })
        }
    }

    @Test(arguments: backends)
    func chunkedResponseWithTrailersIsDecoded(_ backend: EventLoopBackend) async throws {
        let server = try ScriptedServer { peer, _ in
            while peer.readRequest() != nil {
                peer.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n")
                peer.write("6;ext=1\r\n{\"ok\":\r\n")
                peer.write("5\r\ntrue}\r\n0\r\nX-Checksum: 42\r\n\r\n")
            }
        }
        defer { server.stop() }
        try await withClient(backend) { client in
            for _ in 0..<2 {
                let response = try await client.execute(get(server.port), timeout: .seconds(5))
                #expect(String(decoding: response.body, as: UTF8.self) == #"{"ok":true}"#)
                #expect(response.trailers["x-checksum"] == "42")
                #expect(response.headers["content-type"] == "application/json")
            }
            #expect(server.connections.load(ordering: .relaxed) == 1)  // still keep-alive after chunked
        }
    }

    @Test(arguments: backends)
    func connectionCloseResponseIsNotReused(_ backend: EventLoopBackend) async throws {
        let server = try ScriptedServer { peer, _ in
            peer.readRequest()
            peer.write("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
            peer.close()
        }
        defer { server.stop() }
        try await withClient(backend) { client in
            for _ in 0..<3 {
                let response = try await client.execute(get(server.port), timeout: .seconds(5))
                #expect(String(decoding: response.body, as: UTF8.self) == "ok")
            }
            #expect(server.connections.load(ordering: .relaxed) == 3)
        }
    }

    @Test(arguments: backends)
    func bodyUntilCloseIsRead(_ backend: EventLoopBackend) async throws {
        let server = try ScriptedServer { peer, _ in
            peer.readRequest()
            peer.write("HTTP/1.0 200 OK\r\n\r\nuntil the end")
            peer.close()
        }
        defer { server.stop() }
        try await withClient(backend) { client in
            let response = try await client.execute(get(server.port), timeout: .seconds(5))
            #expect(String(decoding: response.body, as: UTF8.self) == "until the end")
        }
    }

    @Test(arguments: backends)
    func expectContinueSendsTheBodyAfterTheInterimResponse(_ backend: EventLoopBackend) async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            try await withClient(backend) { client in
                let request = HTTPClientRequest(
                    method: "POST", host: "127.0.0.1", port: server.port, target: "/e",
                    headers: ["Expect": "100-continue"], body: Array("held back".utf8))
                let response = try await client.execute(request, timeout: .seconds(5))
                #expect(String(decoding: response.body, as: UTF8.self) == "POST /e held back")
            }
        }
        // A server that never sends 100 Continue: the body goes out after the continue timeout.
        let silent = try ScriptedServer { peer, _ in
            peer.continueAnswer = nil
            if let request = peer.readRequest() {
                peer.write("HTTP/1.1 200 OK\r\nContent-Length: \(request.utf8.count)\r\n\r\n\(request)")
            }
        }
        defer { silent.stop() }
        var configuration = HTTPClient.Configuration()
        configuration.continueTimeout = .milliseconds(100)
        try await withClient(backend, configuration) { client in
            let request = HTTPClientRequest(
                method: "POST", host: "127.0.0.1", port: silent.port, target: "/e",
                headers: ["Expect": "100-continue"], body: Array("late body".utf8))
            let response = try await client.execute(request, timeout: .seconds(5))
            #expect(String(decoding: response.body, as: UTF8.self).hasSuffix("late body"))
        }
    }

    @Test(arguments: backends)
    func garbageIsABadResponse(_ backend: EventLoopBackend) async throws {
        let server = try ScriptedServer { peer, _ in
            peer.readRequest()
            peer.write("SSH-2.0-OpenSSH_9.6\r\n\r\n")
        }
        defer { server.stop() }
        try await withClient(backend) { client in
            #expect(await failure(client, get(server.port)) == .badResponse(.malformedStatusLine))
        }
    }

    /// A head that can never end (bare LF line breaks, bytes that are not HTTP) on a connection the
    /// server keeps open is a bad response at once, not a timeout 30 s later.
    @Test(
        arguments: backends,
        [
            ("HTTP/1.1 200 OK\nContent-Length: 2\n\n{}", HTTPResponseParseError.malformedStatusLine),
            ("HTTP/1.1 200 OK\r\nContent-Length: 2\n\n{}", .malformedHeader),
            ("\u{0}\u{1}garbage", .malformedStatusLine),
        ])
    func aHeadThatCannotEndIsABadResponseAtOnce(
        _ backend: EventLoopBackend, _ reply: (String, HTTPResponseParseError)
    ) async throws {
        let server = try ScriptedServer { peer, _ in
            peer.readRequest()
            peer.write(reply.0)
            peer.awaitClientClose()
        }
        defer { server.stop() }
        try await withClient(backend) { client in
            #expect(await failure(client, get(server.port), timeout: .seconds(30)) == .badResponse(reply.1))
        }
    }

    /// `maxConnectionsPerHost` is the total across loops: the loops' shares add up to it exactly,
    /// and a shared pool with fewer connections than loops is refused rather than given one each.
    @Test func theConnectionLimitIsSharedExactlyAcrossLoops() {
        for loops in 1...4 {
            for limit in loops...11 {
                let configuration = HTTPClient.Configuration(maxConnectionsPerHost: limit, loopCount: loops)
                let shares = (0..<loops).map { HTTPClient.poolLimit(loop: $0, of: configuration) }
                #expect(shares.reduce(0, +) == limit, "\(limit) over \(loops): \(shares)")
                #expect(shares.max()! - shares.min()! <= 1)
            }
        }
        #expect(throws: HTTPServerError.self) {
            _ = try HTTPClient(configuration: .init(poolMode: .shared, maxConnectionsPerHost: 1, loopCount: 2))
        }
    }

    @Test(arguments: backends)
    func theSharedPoolIsBounded(_ backend: EventLoopBackend) async throws {
        let handler: HTTPHandler = { _, _ in .respondAfter(HTTPResponse(status: 200), delay: .milliseconds(50)) }
        try await withHTTPServer(.init(), handler: handler) { server in
            try await withClient(backend, .init(poolMode: .shared, maxConnectionsPerHost: 2)) { client in
                let port = server.port
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for i in 0..<8 {
                        group.addTask {
                            try await client.execute(self.get(port, "/\(i)"), timeout: .seconds(10)).status
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses == Array(repeating: 200, count: 8))
                #expect(server.counters().connectionsAccepted == 2)
            }
        }
    }

    @Test(arguments: backends)
    func perPartitionModeHoldsOneConnectionPerDevice(_ backend: EventLoopBackend) async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            try await withClient(backend, .init(poolMode: .perPartition, loopCount: 2)) { client in
                for round in 0..<3 {
                    for device in ["a", "b", "c"] {
                        let response = try await client.execute(
                            get(server.port, "/\(device)/\(round)", partition: device), timeout: .seconds(5))
                        #expect(response.status == 200)
                    }
                }
                #expect(server.counters().connectionsAccepted == 3)
            }
        }
    }

    @Test(arguments: backends)
    func anIdleConnectionTheServerClosedIsNotUsed(_ backend: EventLoopBackend) async throws {
        let configuration = HTTPServer.Configuration(timeouts: .init(idle: .milliseconds(100)))
        try await withHTTPServer(configuration, handler: echoHandler) { server in
            try await withClient(backend) { client in
                #expect(try await client.execute(get(server.port), timeout: .seconds(5)).status == 200)
                #expect(await eventually { server.counters().idleTimeouts == 1 })
                try await Task.sleep(for: .milliseconds(50))  // let the client's loop see the close
                #expect(try await client.execute(get(server.port), timeout: .seconds(5)).status == 200)
                #expect(server.counters().connectionsAccepted == 2)
            }
        }
    }

    @Test func shutdownFailsPendingRequests() async throws {
        let server = try ScriptedServer { peer, _ in
            peer.readRequest()
            peer.awaitClientClose()
        }
        defer { server.stop() }
        let client = try HTTPClient()
        let port = server.port
        let pending = Task { await failure(client, get(port), timeout: .seconds(30)) }
        #expect(await eventually { server.requests.load(ordering: .relaxed) == 1 })
        await client.shutdown()
        #expect(await pending.value == .shutDown)
        #expect(await failure(client, get(port)) == .shutDown)
    }

    /// A client dropped after `shutdown()` never signals its closed eventfd: a test socket may have
    /// taken that number, and 8 bytes of wake-up would land in front of an HTTP response.
    @Test func droppingAShutDownClientWritesToNoReusedDescriptor() async throws {
        var client: HTTPClient? = try HTTPClient()
        await client?.shutdown()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)  // takes the lowest free numbers: the wake-up channel's, most likely
        client = nil
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        var byte: UInt8 = 0
        #expect(read(fds[0], &byte, 1) == -1)  // EAGAIN: nothing was written into the pipe
        close(fds[0])
        close(fds[1])
    }

    /// The calling thread's name (`optolink-cli-N` on a client loop).
    private static func threadName() -> String {
        var buffer = [CChar](repeating: 0, count: 32)
        guard cepoll_thread_name(&buffer, buffer.count) == 0 else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A task that prefers a loop as its executor runs on that loop's thread before and after
    /// each request, and its requests go out on that loop's connections.
    @Test(arguments: backends)
    func aTaskPreferringALoopRunsOnItsThread(_ backend: EventLoopBackend) async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            try await withClient(backend, .init(loopCount: 2)) { client in
                let executors = client.taskExecutors
                #expect(executors.count == 2)
                for (index, executor) in executors.enumerated() {
                    let request = get(server.port, "/pinned/\(index)")
                    let names = try await Task(executorPreference: executor) {
                        let before = Self.threadName()
                        let response = try await client.execute(request, timeout: .seconds(5))
                        #expect(response.status == 200)
                        return [before, Self.threadName()]
                    }.value
                    #expect(names == ["optolink-cli-\(index)", "optolink-cli-\(index)"])
                }
                // One connection per loop: each task's request went out on its own loop.
                #expect(server.counters().connectionsAccepted == 2)
                // A child task inherits the preference, and many of them share the loop.
                let names = await withTaskGroup(of: String.self) { group in
                    for i in 0..<16 {
                        group.addTask(executorPreference: executors[1]) {
                            _ = try? await client.execute(get(server.port, "/child/\(i)"), timeout: .seconds(5))
                            return Self.threadName()
                        }
                    }
                    return await group.reduce(into: Set<String>()) { $0.insert($1) }
                }
                #expect(names == ["optolink-cli-1"])
            }
        }
    }

    /// After `shutdown()` a task that still prefers a loop runs on the global pool instead of
    /// never, and its requests fail as shut down.
    @Test func aTaskPreferringAStoppedLoopStillRuns() async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            let client = try HTTPClient()
            let executor = client.taskExecutors[0]
            await client.shutdown()
            let port = server.port
            let outcome = await Task(executorPreference: executor) { () -> (String, HTTPClientError?) in
                try? await Task.sleep(for: .milliseconds(1))  // a hop back to the preferred executor
                do {
                    _ = try await client.execute(get(port), timeout: .seconds(5))
                    return (Self.threadName(), nil)
                } catch {
                    return (Self.threadName(), error as? HTTPClientError)
                }
            }.value
            #expect(!outcome.0.hasPrefix("optolink-cli"))
            #expect(outcome.1 == .shutDown)
        }
    }
}
