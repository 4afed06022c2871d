import OptoLinkHTTP
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Servers that close kept-alive connections the way proxies do (after every response, after N
/// requests, when idle, with `Connection: close`): the client opens a new connection instead of
/// failing, and sends every request exactly once.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct HTTPClientServerCloseTests {
    static let backends = EventLoopBackend.allCases.filter(\.isAvailable)

    /// Counts connections a script has closed, once `close` has returned (the FIN is on its way).
    final class Closes: Sendable {
        let count = Atomic<Int>(0)
        func closed(_ peer: ScriptedServer.Peer) {
            peer.close()
            count.wrappingAdd(1, ordering: .releasing)
        }
        var value: Int { count.load(ordering: .acquiring) }
    }

    private func get(_ port: Int, _ index: Int) -> HTTPClientRequest {
        HTTPClientRequest(method: "GET", host: "127.0.0.1", port: port, target: "/\(index)")
    }

    private static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    @Test(arguments: backends)
    func aServerThatClosesAfterEveryResponseCostsNoRequest(_ backend: EventLoopBackend) async throws {
        let closes = Closes()
        // No `Connection: close`: the response says keep-alive, the close comes after it.
        let server = try ScriptedServer { peer, _ in
            guard peer.readRequest() != nil else { return }
            peer.write(Self.ok)
            closes.closed(peer)
        }
        defer { server.stop() }
        try await withClient(backend) { client in
            for index in 1...10 {
                let response = try await client.execute(get(server.port, index), timeout: .seconds(5))
                #expect(response.status == 200)
                #expect(await eventually { closes.value == index })
            }
        }
        #expect(server.connections.load(ordering: .relaxed) == 10)
        #expect(server.requestTexts.count == 10)  // each sent once
    }

    @Test(arguments: backends)
    func aServerThatClosesAfterThreeRequestsCostsNoRequest(_ backend: EventLoopBackend) async throws {
        let closes = Closes()
        let server = try ScriptedServer { peer, _ in
            for _ in 0..<3 {
                guard peer.readRequest() != nil else { return }
                peer.write(Self.ok)
            }
            closes.closed(peer)
        }
        defer { server.stop() }
        try await withClient(backend) { client in
            for index in 1...9 {
                let response = try await client.execute(get(server.port, index), timeout: .seconds(5))
                #expect(response.status == 200)
                if index % 3 == 0 { #expect(await eventually { closes.value == index / 3 }) }
            }
        }
        #expect(server.connections.load(ordering: .relaxed) == 3)
        #expect(server.requestTexts.map { String($0.split(separator: " ")[1]) } == (1...9).map { "/\($0)" })
    }

    @Test(arguments: backends)
    func aConnectionClosedWhileIdleIsReplacedBeforeTheNextRequest(_ backend: EventLoopBackend) async throws {
        let closes = Closes()
        let idle = Atomic<Bool>(false)
        let server = try ScriptedServer { peer, index in
            guard peer.readRequest() != nil else { return }
            peer.write(Self.ok)
            if index == 0 {
                // The server's idle timeout, as soon as the test says the connection is idle.
                while !idle.load(ordering: .acquiring) { usleep(1000) }
                closes.closed(peer)
            }
        }
        defer { server.stop() }
        try await withClient(backend) { client in
            let first = try await client.execute(get(server.port, 1), timeout: .seconds(5)).status
            #expect(first == 200)
            idle.store(true, ordering: .releasing)
            #expect(await eventually { closes.value == 1 })
            let status = try await client.execute(get(server.port, 2), timeout: .seconds(5)).status
            #expect(status == 200)
        }
        #expect(server.connections.load(ordering: .relaxed) == 2)
        #expect(server.requestTexts.count == 2)
    }

    @Test(arguments: backends)
    func connectionCloseIsHonouredWithoutALostRequest(_ backend: EventLoopBackend) async throws {
        let server = try ScriptedServer { peer, _ in
            for round in 1...2 {
                guard peer.readRequest() != nil else { return }
                let close = round == 2 ? "Connection: close\r\n" : ""
                peer.write("HTTP/1.1 200 OK\r\n\(close)Content-Length: 2\r\n\r\nok")
            }
            peer.close()
        }
        defer { server.stop() }
        try await withClient(backend) { client in
            for index in 1...6 {
                let status = try await client.execute(get(server.port, index), timeout: .seconds(5)).status
                #expect(status == 200)
            }
        }
        #expect(server.connections.load(ordering: .relaxed) == 3)
        #expect(server.requestTexts.count == 6)
    }

    /// The probe a parked connection gets before it carries a request.
    @Test func aParkedConnectionIsReusableOnlyWhileNothingIsReadable() async throws {
        let stage = Atomic<Int>(0)
        let server = try ScriptedServer { peer, index in
            while stage.load(ordering: .acquiring) == 0 { usleep(1000) }
            if index == 0 { peer.close() } else { peer.write("x") }
            stage.store(2, ordering: .releasing)
            while stage.load(ordering: .acquiring) != 3 { usleep(1000) }
        }
        defer { server.stop() }
        func connection(_ slot: Int) throws -> ClientConnection {
            var storage = sockaddr_storage()
            let length = try ListeningSocket.fill(&storage, host: "127.0.0.1", port: server.port)
            let bytes = withUnsafeBytes(of: &storage) { [UInt8]($0.prefix(Int(length))) }
            let connection = try ClientConnection.open(
                family: AF_INET, portable: true, id: ClientConnectionID(slot: slot, generation: 1), limits: .init()
            ).get()
            _ = connection.beginConnect(to: ClientAddress(bytes: bytes, family: AF_INET))
            var writable = pollfd(fd: connection.fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&writable, 1, 5000)
            #expect(connection.finishConnect() == 0)
            return connection
        }
        let closedByServer = try connection(0)
        #expect(await eventually { server.connections.load(ordering: .relaxed) == 1 })
        let sentBytes = try connection(1)
        #expect(await eventually { server.connections.load(ordering: .relaxed) == 2 })
        #expect(closedByServer.isReusable())
        #expect(sentBytes.isReusable())
        stage.store(1, ordering: .releasing)
        #expect(await eventually { stage.load(ordering: .acquiring) == 2 })
        #expect(await eventually { !closedByServer.isReusable() })
        #expect(await eventually { !sentBytes.isReusable() })
        stage.store(3, ordering: .releasing)
        close(closedByServer.fd)
        close(sentBytes.fd)
    }
}
