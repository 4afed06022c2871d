import Foundation
import OptoLinkHTTP
import OptoLinkTestSupport
import Synchronization
import Testing

import OptoLink
import OptoLinkSoak

/// Public calls over the native transport (it declares a self-timed deadline and the call scope)
/// run in their caller's task (no task
/// per call); `dispose()` and the caller's cancellation must still end them at once, as they end
/// a call running in a task of its own.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct CallScopeTests {
    static let eventsBody = #"{"statusCode":429,"message":"Rate limit exceeded. Retry after 30 seconds."}"#

    /// An SDK instance over a fresh native client to `port`, on `clock`.
    static func sdk(
        port: Int, client: HTTPClient, clock: any OptoLinkClock = OptoLinkSystemClock(), maxRetries: Int = 0,
        observer: HotPathTests.ErrorObserver
    ) throws -> OptoLink {
        var config = OptoLinkConfig(
            apiKey: "opl_sdk_test_acme_client", orgKey: "acme",
            baseUrl: try #require(URL(string: "http://127.0.0.1:\(port)")))
        config.timeout = 15
        config.maxRetries = maxRetries
        return OptoLink(
            config: config,
            environment: OptoLinkEnvironment(
                store: InMemoryKeyValueStore(), pasteboard: InMemoryPasteboard(nil),
                deviceInfo: OptoLinkDeviceInfo(osVersion: "18.1", deviceModel: "iPhone", language: "en-US"),
                transport: NativeTransport(client: client), middlewares: [observer], clock: clock,
                label: "d000001#1"))
    }

    /// Requests the test server received.
    final class Seen: Sendable {
        private let value = Mutex(0)
        func add() { value.withLock { $0 += 1 } }
        var count: Int { value.withLock { $0 } }
    }

    /// Waits (at most 10 s) until `count` requests reached the server.
    static func waitFor(_ seen: Seen, count: Int) async throws {
        for _ in 0..<1_000 where seen.count < count { try await Task.sleep(for: .milliseconds(10)) }
        #expect(seen.count >= count, "the request never reached the server")
    }

    /// What a call ended with, and whether its caller's task was cancelled afterwards.
    static func outcome(of call: Task<(URLError.Code?, Bool), Never>) async -> (URLError.Code?, Bool) {
        await call.value
    }

    static func trackEvent(_ sdk: OptoLink) -> Task<(URLError.Code?, Bool), Never> {
        Task {
            do {
                try await sdk.trackEvent(name: "e")
                return (nil, Task.isCancelled)
            } catch let error as OptoLinkConnectionError {
                return (error.underlying.code, Task.isCancelled)
            } catch {
                return (URLError.Code.unknown, Task.isCancelled)
            }
        }
    }

    /// The transport's declared capabilities decide, on any clock; a transport that declares
    /// none (URLSession's) keeps a task of its own per call.
    @Test func theNativeTransportRunsCallsInTheCallersTaskOnAnyClock() async throws {
        let client = try HTTPClient()
        let observer = HotPathTests.ErrorObserver()
        #expect(try Self.sdk(port: 1, client: client, observer: observer).scopedCalls)
        #expect(try Self.sdk(port: 1, client: client, clock: ManualClock(), observer: observer).scopedCalls)
        let plain = OptoLink(
            config: OptoLinkConfig(
                apiKey: "opl_sdk_test_acme_client", orgKey: "acme",
                baseUrl: try #require(URL(string: "http://127.0.0.1:1"))),
            environment: .inMemory(transport: URLSessionTransport(configuration: .ephemeral)))
        #expect(!plain.scopedCalls)
        await client.shutdown()
    }

    /// Runs `body` against a local server that answers every request with `result` (counting
    /// them) and a native client for it; returns how many requests the server received.
    static func withCountingServer(
        _ configuration: HTTPServer.Configuration = .init(), answering result: HTTPHandlerResult,
        _ body: (_ seen: Seen, _ port: Int, _ client: HTTPClient) async throws -> Void
    ) async throws -> Int {
        let seen = Seen()
        try await withHTTPServer(
            configuration,
            handler: { _, _ in
                seen.add()
                return result
            }
        ) { server in
            let client = try HTTPClient()
            try await body(seen, server.port, client)
            await client.shutdown()
        }
        return seen.count
    }

    /// Runs `body` with an instance whose `trackEvent` is in flight (sent, answered only after
    /// 20 s, past its 15 s timeout); returns how many requests the server received.
    static func withCallInFlight(
        _ body: (
            _ sdk: OptoLink, _ call: Task<(URLError.Code?, Bool), Never>, _ seen: Seen,
            _ observer: HotPathTests.ErrorObserver
        ) async throws -> Void
    ) async throws -> Int {
        try await withCountingServer(
            .init(timeouts: .init(shutdownGrace: .milliseconds(300))),
            answering: .respondAfter(HTTPResponse(status: 200), delay: .seconds(20))
        ) { seen, port, client in
            let observer = HotPathTests.ErrorObserver()
            let sdk = try Self.sdk(port: port, client: client, observer: observer)
            let call = Self.trackEvent(sdk)
            try await Self.waitFor(seen, count: 1)
            try await body(sdk, call, seen, observer)
            sdk.dispose()
        }
    }

    @Test func disposeEndsACallInFlightAtOnceAndLeavesTheCallerUncancelled() async throws {
        let requests = try await Self.withCallInFlight { sdk, call, _, observer in
            sdk.dispose()
            let (code, callerCancelled) = await Self.outcome(of: call)
            // Cancelled, not timed out (15 s) nor answered (20 s): dispose() ended it.
            #expect(code == .cancelled)
            #expect(!callerCancelled)
            #expect(observer.errors.withLock { $0 } == [.cancelled])
        }
        #expect(requests == 1)
    }

    @Test func disposeCutsABackOffSleepAndNothingIsRetried() async throws {
        let requests = try await Self.withCountingServer(
            answering: .respond(
                HTTPResponse(
                    status: 429, headers: ["Content-Type": "application/json"], body: Array(Self.eventsBody.utf8)))
        ) { seen, port, client in
            let observer = HotPathTests.ErrorObserver()
            let sdk = try Self.sdk(port: port, client: client, maxRetries: 2, observer: observer)
            let call = Self.trackEvent(sdk)
            try await Self.waitFor(seen, count: 1)
            try await Task.sleep(for: .milliseconds(200))  // into its 30 s back-off (or just before: same outcome)
            sdk.dispose()
            let (code, callerCancelled) = await Self.outcome(of: call)
            #expect(code == .cancelled)
            #expect(!callerCancelled)
        }
        #expect(requests == 1)
    }

    @Test func cancellingTheCallerEndsACallInFlight() async throws {
        let requests = try await Self.withCallInFlight { sdk, call, seen, _ in
            call.cancel()
            let (code, callerCancelled) = await Self.outcome(of: call)
            #expect(code == .cancelled)
            #expect(callerCancelled)
            // The instance lives on: a later call is sent, and dispose() ends it.
            let next = Self.trackEvent(sdk)
            try await Self.waitFor(seen, count: 2)
            sdk.dispose()
            #expect(await Self.outcome(of: next).0 == .cancelled)
        }
        #expect(requests == 2)
    }

    @Test func aCallAfterDisposeThrowsWithoutARequest() async throws {
        let requests = try await Self.withCountingServer(answering: .respond(HTTPResponse(status: 200))) {
            _, port, client in
            let sdk = try Self.sdk(port: port, client: client, observer: HotPathTests.ErrorObserver())
            sdk.dispose()
            #expect(await Self.outcome(of: Self.trackEvent(sdk)).0 == .cancelled)
        }
        #expect(requests == 0)
    }
}
