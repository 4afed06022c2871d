import OptoLinkHTTP
import Testing

/// The native client's TLS against a real TLS server on 127.0.0.1 (OpenSSL's server side through
/// the same binding), with the committed test certificates of `Tests/Fixtures/tls`.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct HTTPClientTLSTests {
    static let backends = EventLoopBackend.allCases.filter(\.isAvailable)

    private func certificates() -> TestCertificates { TestCertificates.shared }

    private func withClient<T>(
        _ backend: EventLoopBackend, tls: TLSConfiguration, _ body: (HTTPClient) async throws -> T
    ) async throws -> T {
        var configuration = HTTPClient.Configuration(eventLoopBackend: backend, tls: tls)
        configuration.addressOverrides = ["tls.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]]
        return try await withHTTPClient(configuration, body)
    }

    private func get(_ host: String, _ port: Int, _ target: String = "/") -> HTTPClientRequest {
        HTTPClientRequest(method: "GET", host: host, port: port, target: target, usesTLS: true)
    }

    /// The TLS failure of one request, or `nil` when it got a response.
    private func tlsFailure(_ client: HTTPClient, _ request: HTTPClientRequest) async -> TLSFailure? {
        do {
            _ = try await client.execute(request, timeout: .seconds(5))
            return nil
        } catch {
            guard case .tlsFailed(let failure) = error else { return TLSFailure(.configuration, "not TLS: \(error)") }
            return failure
        }
    }

    @Test(arguments: backends, ["tls.test", "127.0.0.1"])
    func aCertificateFromTheAddedCAVerifiesByNameAndByIP(_ backend: EventLoopBackend, host: String) async throws {
        let pki = certificates()
        try await withTLSServer(pki.valid) { server in
            try await withClient(backend, tls: TLSConfiguration(additionalTrustFile: pki.caFile)) { client in
                for i in 0..<3 {
                    var request = get(host, server.port, "/k/\(i)")
                    if i == 1 {
                        request.method = "POST"
                        request.body = Array(repeating: UInt8(ascii: "x"), count: 100_000)  // several TLS records
                    }
                    let response = try await client.execute(request, timeout: .seconds(5))
                    #expect(response.status == 200)
                    #expect(String(decoding: response.body, as: UTF8.self) == "\(request.method) /k/\(i)")
                    // The handshake is timed on the response its connection was opened for, only.
                    if i == 0 {
                        let handshake = try #require(response.tlsHandshakeNanoseconds)
                        #expect(handshake > 0 && handshake < 5_000_000_000)
                    } else {
                        #expect(response.tlsHandshakeNanoseconds == nil)
                    }
                }
                #expect(server.connections.load(ordering: .relaxed) == 1)  // kept alive over TLS
                #expect(client.tlsHandshakes == TLSHandshakeCounts(full: 1, resumed: 0))
            }
        }
    }

    @Test(arguments: backends)
    func aPrivateCAIsUnknownWithoutTheAddedTrustFile(_ backend: EventLoopBackend) async throws {
        let pki = certificates()
        try await withTLSServer(pki.valid) { server in
            try await withClient(backend, tls: TLSConfiguration()) { client in
                let failure = await tlsFailure(client, get("tls.test", server.port))
                #expect(failure?.kind == .unknownCA)
                #expect(failure?.reason == "unable to get local issuer certificate")
            }
            // Another CA's bundle does not help either.
            try await withClient(backend, tls: TLSConfiguration(additionalTrustFile: pki.otherCAFile)) { client in
                #expect(await tlsFailure(client, get("tls.test", server.port))?.kind == .unknownCA)
            }
        }
    }

    @Test(arguments: backends)
    func anExpiredCertificateFailsAsExpired(_ backend: EventLoopBackend) async throws {
        let pki = certificates()
        try await withTLSServer(pki.expired) { server in
            try await withClient(backend, tls: TLSConfiguration(additionalTrustFile: pki.caFile)) { client in
                let failure = await tlsFailure(client, get("tls.test", server.port))
                #expect(failure?.kind == .expired)
                #expect(failure?.reason == "certificate has expired")
            }
        }
    }

    @Test(arguments: backends, ["tls.test", "127.0.0.1"])
    func aCertificateForAnotherNameFailsAsHostnameMismatch(_ backend: EventLoopBackend, host: String) async throws {
        let pki = certificates()
        try await withTLSServer(pki.wrongName) { server in
            try await withClient(backend, tls: TLSConfiguration(additionalTrustFile: pki.caFile)) { client in
                let failure = await tlsFailure(client, get(host, server.port))
                #expect(failure?.kind == .hostnameMismatch)
                #expect(failure?.reason == (host == "tls.test" ? "hostname mismatch" : "IP address mismatch"))
                // The name the certificate is for verifies.
                let response = try await client.execute(get("other.test", server.port), timeout: .seconds(5))
                #expect(response.status == 200)
            }
        }
    }

    @Test(arguments: backends)
    func insecureAcceptsAnyCertificate(_ backend: EventLoopBackend) async throws {
        let pki = certificates()
        try await withTLSServer(pki.expired) { server in
            try await withClient(backend, tls: TLSConfiguration(verifiesPeer: false)) { client in
                let response = try await client.execute(get("other.test", server.port), timeout: .seconds(5))
                #expect(response.status == 200)
            }
        }
    }

    @Test(arguments: backends)
    func aServerClosingAfterEveryResponseLosesNothingAndResumes(_ backend: EventLoopBackend) async throws {
        let pki = certificates()
        try await withTLSServer(pki.valid, requestsPerConnection: 1) { server in
            try await withClient(backend, tls: TLSConfiguration(additionalTrustFile: pki.caFile)) { client in
                for i in 0..<6 {
                    let response = try await client.execute(
                        get("tls.test", server.port, "/r/\(i)"), timeout: .seconds(5))
                    #expect(String(decoding: response.body, as: UTF8.self) == "GET /r/\(i)")
                }
                #expect(server.requests.load(ordering: .relaxed) == 6)
                #expect(server.connections.load(ordering: .relaxed) == 6)
                // The first connection's session carries the other five: one full handshake in all.
                #expect(client.tlsHandshakes == TLSHandshakeCounts(full: 1, resumed: 5))
                #expect(server.resumedHandshakes.load(ordering: .relaxed) == 5)
            }
        }
    }

    @Test(arguments: backends)
    func aPlainHTTPPortFailsAsAProtocolFailure(_ backend: EventLoopBackend) async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            try await withClient(backend, tls: TLSConfiguration()) { client in
                let failure = await tlsFailure(client, get("127.0.0.1", server.port))
                #expect(failure?.kind == .protocol)
                #expect(failure?.reason.contains("wrong version number") == true, "\(failure?.reason ?? "")")
            }
        }
    }

    @Test func aMissingTrustFileFailsBeforeAnyConnection() async throws {
        try await withClient(.poll, tls: TLSConfiguration(additionalTrustFile: "/nonexistent/ca.pem")) { client in
            let failure = await tlsFailure(client, get("tls.test", 9))
            #expect(failure?.kind == .configuration)
            #expect(failure?.reason.hasPrefix("cannot load CA certificates from /nonexistent/ca.pem") == true)
        }
    }
}
