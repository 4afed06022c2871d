import CEpoll
import OptoLinkHTTP
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Addresses of the native client: every record of a name used in turn, one that stops
/// answering skipped, a name resolved again after its TTL, and connections bound to a source
/// address the server then sees as the peer.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct AddressResolverTests {
    private func text(_ address: ClientAddress) -> String {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { $0.copyBytes(from: address.bytes) }
        return ListeningSocket.describe(storage).address
    }

    @Test func newRequestsGoRoundTheRecordsInTurn() throws {
        let resolver = AddressResolver(ttl: .seconds(30), overrides: ["multi.test": ["127.0.0.3", "127.0.0.4", "::1"]])
        let firsts = try (0..<6).map { _ in text(try resolver.addresses(host: "multi.test", port: 80)[0]) }
        #expect(firsts == ["127.0.0.3", "127.0.0.4", "::1", "127.0.0.3", "127.0.0.4", "::1"])
        // Every list holds every record: a connection that fails tries the next one.
        #expect(try resolver.addresses(host: "multi.test", port: 80).count == 3)
    }

    @Test func anAddressWhoseConnectFailedIsTriedLastUntilItsPauseEnds() throws {
        let resolver = AddressResolver(ttl: .seconds(30), overrides: ["multi.test": ["127.0.0.3", "127.0.0.4"]])
        let first = try resolver.addresses(host: "multi.test", port: 80)
        #expect(text(first[0]) == "127.0.0.3")
        first[0].health.connectFailed(at: cepoll_monotonic_ns())
        for _ in 0..<4 {
            #expect(try resolver.addresses(host: "multi.test", port: 80).map(text) == ["127.0.0.4", "127.0.0.3"])
        }
        // Its pause over (a failure long ago), or a connect to it made, it takes its turn again.
        first[0].health.connectFailed(at: 0)
        let turns = try (0..<2).map { _ in text(try resolver.addresses(host: "multi.test", port: 80)[0]) }
        #expect(Set(turns) == ["127.0.0.3", "127.0.0.4"])
    }

    @Test func aNameIsResolvedAgainAfterItsTTLAndKeepsItsAnswerWhenThatFails() throws {
        let answers = Mutex<[[String]]>([["127.0.0.3"], ["127.0.0.4"], []])
        let calls = Atomic<Int>(0)
        let lookUp: AddressResolver.LookUp = { _ in
            calls.add(1, ordering: .relaxed)
            return answers.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }
        }
        let cached = AddressResolver(ttl: .seconds(30), lookUp: lookUp)
        #expect(try cached.addresses(host: "dns.test", port: 80).map(text) == ["127.0.0.3"])
        #expect(try cached.addresses(host: "dns.test", port: 80).map(text) == ["127.0.0.3"])
        #expect(calls.load(ordering: .relaxed) == 1)

        answers.withLock { $0 = [["127.0.0.3"], ["127.0.0.4"], []] }
        let expiring = AddressResolver(ttl: .zero, lookUp: lookUp)
        #expect(try expiring.addresses(host: "dns.test", port: 80).map(text) == ["127.0.0.3"])
        #expect(try expiring.addresses(host: "dns.test", port: 80).map(text) == ["127.0.0.4"])
        // The DNS answers nothing now: the last answer stands.
        #expect(try expiring.addresses(host: "dns.test", port: 80).map(text) == ["127.0.0.4"])
    }

    @Test func literalsAreNeverLookedUpAndANameWithNoAddressIsCannotResolve() throws {
        let calls = Atomic<Int>(0)
        let resolver = AddressResolver(
            ttl: .zero,
            lookUp: { _ in
                calls.add(1, ordering: .relaxed)
                return []
            })
        #expect(try resolver.addresses(host: "::1", port: 80).map(text) == ["::1"])
        #expect(try resolver.addresses(host: "localhost", port: 80).map(text) == ["127.0.0.1", "::1"])
        #expect(calls.load(ordering: .relaxed) == 0)
        #expect(throws: HTTPClientError.cannotResolve(host: "nowhere.test")) {
            try resolver.addresses(host: "nowhere.test", port: 80)
        }
    }

    @Test func aSourceAddressKeepsTheHostsAddressesOfItsIPVersion() throws {
        let resolver = AddressResolver(ttl: .seconds(30))
        #expect(try resolver.addresses(host: "localhost", port: 80, family: AF_INET6).map(text) == ["::1"])
        #expect(try resolver.addresses(host: "localhost", port: 80, family: AF_INET).map(text) == ["127.0.0.1"])
        #expect(throws: HTTPClientError.self) { try resolver.addresses(host: "127.0.0.1", port: 80, family: AF_INET6) }
    }

    /// Two servers on one port of two loopback addresses, behind one name: new connections
    /// (one per partition) alternate between them.
    @Test func connectionsToANameSpreadOverItsAddresses() async throws {
        let first = HTTPServer(configuration: .init(host: "127.0.0.3", port: 0), handler: echoHandler)
        try first.start()
        let second = HTTPServer(configuration: .init(host: "127.0.0.4", port: first.port), handler: echoHandler)
        do { try second.start() } catch {
            await first.shutdown()
            throw error
        }
        var configuration = HTTPClient.Configuration(poolMode: .perPartition)
        configuration.addressOverrides = ["pair.test": ["127.0.0.3", "127.0.0.4"]]
        let client = try HTTPClient(configuration: configuration)
        for device in 0..<4 {
            let request = HTTPClientRequest(
                method: "GET", host: "pair.test", port: first.port, target: "/", partition: "d\(device)")
            #expect(try await client.execute(request, timeout: .seconds(5)).status == 200)
        }
        await client.shutdown()
        #expect(first.counters().connectionsAccepted == 2)
        #expect(second.counters().connectionsAccepted == 2)
        await first.shutdown()
        await second.shutdown()
    }

    /// A request with a source address leaves from it: the server's peer is that address, and
    /// requests from two addresses never share a connection.
    @Test(arguments: EventLoopBackend.allCases.filter(\.isAvailable))
    func theServerSeesTheSourceAddressAsThePeer(_ backend: EventLoopBackend) async throws {
        let peers = Mutex<[String]>([])
        let handler: HTTPHandler = { _, connection in
            peers.withLock { $0.append(connection.peerAddress) }
            return .respond(HTTPResponse(status: 200, body: Array(connection.peerAddress.utf8)))
        }
        try await withHTTPServer(.init(host: "127.0.0.1"), handler: handler) { server in
            var configuration = HTTPClient.Configuration()
            configuration.eventLoopBackend = backend
            let client = try HTTPClient(configuration: configuration)
            for source in ["127.0.0.7", "127.0.0.8", "127.0.0.7", nil] {
                let request = HTTPClientRequest(
                    method: "GET", host: "127.0.0.1", port: server.port, target: "/", sourceAddress: source)
                let response = try await client.execute(request, timeout: .seconds(5))
                #expect(String(decoding: response.body, as: UTF8.self) == source ?? "127.0.0.1")
            }
            await client.shutdown()
            #expect(peers.withLock { $0 } == ["127.0.0.7", "127.0.0.8", "127.0.0.7", "127.0.0.1"])
            #expect(server.counters().connectionsAccepted == 3)
        }
    }

    @Test func bindProblemsNameTheCause() {
        #expect(HTTPSourceAddress.bindProblem("127.0.0.9") == nil)
        #expect(HTTPSourceAddress.bindProblem("::1") == nil)
        #expect(HTTPSourceAddress.bindProblem("192.0.2.77")?.hasPrefix("not an address of this machine") == true)
        #expect(HTTPSourceAddress.bindProblem("host.test") == "not a numeric IPv4 or IPv6 address")
    }
}
