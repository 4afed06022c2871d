import Foundation
import OptoLink
import OptoLinkHTTP
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The SDK's URLSession transport against a real server on 127.0.0.1 that kills a reused
/// keep-alive connection before answering (docs/LINUX.md §1, "A reset on a reused connection").
/// A request with a body fails at once as a lost connection, rather than stalling there until
/// URLSession's own timeout and being reported as timed out.
@Suite("URLSession transport: a connection lost before the response", .serialized, .timeLimit(.minutes(1)))
struct URLSessionLostConnectionTests {
    /// Requests that reached the server's handler.
    final class Arrivals: Sendable {
        private let count = Mutex(0)
        func next() -> Int {
            count.withLock { count in
                count += 1
                return count
            }
        }
        var total: Int { count.withLock { $0 } }
    }

    /// Answers requests before number `first` with 200 and `fault` from it on, counting what arrives.
    static func server(
        _ fault: HTTPHandlerResult, from first: Int = 2, _ body: (HTTPServer, Arrivals) async throws -> Void
    ) async throws {
        let arrived = Arrivals()
        let configuration = HTTPServer.Configuration(
            host: "127.0.0.1", port: 0, timeouts: .init(shutdownGrace: .milliseconds(300)))
        try await withHTTPServer(
            configuration,
            handler: { _, _ in
                arrived.next() >= first ? fault : .respond(HTTPResponse(status: 200, body: Array(#"{"ok":true}"#.utf8)))
            }
        ) { server in try await body(server, arrived) }
    }

    static func request(_ server: HTTPServer, method: String) throws -> OptoLinkHTTPRequest {
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/sdk/events"))
        return OptoLinkHTTPRequest(
            method: method, url: url, headers: ["Content-Type": "application/json"],
            body: method == "POST" ? Data(#"{"deviceId":"d1","eventName":"e"}"#.utf8) : nil)
    }

    static let context = OptoLinkRequestContext(endpoint: .events, callId: 1, attempt: 1, timeout: .seconds(10))

    static func code(_ operation: () async throws -> OptoLinkHTTPResponse) async -> URLError.Code? {
        do {
            _ = try await operation()
            return nil
        } catch let error as URLError {
            return error.code
        } catch {
            return .unknown
        }
    }

    @Test(
        "a POST whose reused connection is reset (or closed) before any answer is lost, not timed out",
        arguments: [("reset", HTTPHandlerResult.reset), ("close", .close)])
    func postOnAReusedConnection(_ name: String, _ fault: HTTPHandlerResult) async throws {
        let transport = URLSessionTransport(configuration: .ephemeral)
        defer { transport.session.finishTasksAndInvalidate() }
        try await Self.server(fault, from: 2) { server, arrived in
            let post = try Self.request(server, method: "POST")
            #expect(try await transport.send(post, context: Self.context).status == 200)
            // The second request goes out on the kept-alive connection, which the server kills.
            #expect(await Self.code { try await transport.send(post, context: Self.context) } == .networkConnectionLost)
            // libcurl's re-send on a fresh connection is stopped before its body: the server
            // never sees a second copy of the request.
            #expect(arrived.total == 2)
        }
    }

    @Test("after a lost connection the transport sends the next request on a fresh one")
    func recovers() async throws {
        let transport = URLSessionTransport(configuration: .ephemeral)
        defer { transport.session.finishTasksAndInvalidate() }
        // Only the second request is reset; the third is answered.
        let arrived = Arrivals()
        try await withHTTPServer(
            HTTPServer.Configuration(host: "127.0.0.1", port: 0, timeouts: .init(shutdownGrace: .milliseconds(300))),
            handler: { _, _ in
                arrived.next() == 2 ? .reset : .respond(HTTPResponse(status: 200))
            }
        ) { server in
            let post = try Self.request(server, method: "POST")
            #expect(try await transport.send(post, context: Self.context).status == 200)
            #expect(await Self.code { try await transport.send(post, context: Self.context) } == .networkConnectionLost)
            #expect(try await transport.send(post, context: Self.context).status == 200)
            #expect(arrived.total == 3)
        }
    }

    @Test("a GET on a reset reused connection is lost too (libcurl re-sends it once; the server sees both)")
    func getOnAReusedConnection() async throws {
        let transport = URLSessionTransport(configuration: .ephemeral)
        defer { transport.session.finishTasksAndInvalidate() }
        try await Self.server(.reset, from: 2) { server, arrived in
            let get = try Self.request(server, method: "GET")
            #expect(try await transport.send(get, context: Self.context).status == 200)
            #expect(await Self.code { try await transport.send(get, context: Self.context) } == .networkConnectionLost)
            // The body-less re-send on a fresh connection is libcurl's own, invisible to the SDK.
            #expect(arrived.total == 3)
        }
    }

    @Test("through the SDK: trackEvent on a reused connection that is reset fails as connection_lost")
    func throughTheSDK() async throws {
        try await Self.server(.reset, from: 3) { server, arrived in
            let transport = URLSessionTransport(configuration: .ephemeral)
            defer { transport.session.finishTasksAndInvalidate() }
            let attempts = AttemptLog()
            let base = try #require(URL(string: "http://127.0.0.1:\(server.port)"))
            var config = OptoLinkConfig(apiKey: "opl_sdk_test_acme_client", orgKey: "acme", baseUrl: base)
            config.maxRetries = 0
            // A reset fails the call at once; the long timeout only keeps a starved test process
            // (a whole suite on a loaded machine) from turning that into `timed_out`.
            config.timeout = 60
            let environment = OptoLinkEnvironment(
                store: InMemoryKeyValueStore(), pasteboard: InMemoryPasteboard(nil),
                deviceInfo: OptoLinkDeviceInfo(osVersion: "18.1", deviceModel: "iPhone", language: "en-US"),
                transport: transport, middlewares: [attempts], clock: OptoLinkSystemClock())
            let sdk = OptoLink(config: config, environment: environment)
            // Two answered requests keep the connection alive; the third (the event) is reset.
            _ = try await transport.send(try Self.request(server, method: "POST"), context: Self.context)
            _ = try await transport.send(try Self.request(server, method: "POST"), context: Self.context)
            do {
                try await sdk.trackEvent(name: "e")
                Issue.record("expected a connection error")
            } catch let error as OptoLinkConnectionError {
                #expect(error.shortDescription == "connection_lost")
            }
            #expect(attempts.of(.events).map(\.status) == [nil])
            #expect(arrived.total == 3)
        }
    }
}
