import Foundation
import OptoLink
import OptoLinkTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// docs/CONTRACT.md §1: bodies, headers and the middleware/context seam.
@Suite(.timeLimit(.minutes(1)))
struct RequestShapeTests {
    func matchBody(clipboard: String?) async throws -> [String: Any] {
        let transport = StubTransport()
        let sdk = OptoLink(
            config: Fixture.config(),
            environment: Fixture.environment(transport, pasteboard: InMemoryPasteboard(clipboard)))
        await sdk.start()
        return try #require(transport.requests(for: .match).first?.jsonBody)
    }

    @Test func matchBodyHasTheExactKeySetAndNoNulls() async throws {
        let body = try await matchBody(clipboard: "hello world")
        #expect(Set(body.keys) == ["platform", "osVersion", "deviceModel", "language", "deviceId"])
        #expect(body["timezone"] == nil)
        #expect(body.values.allSatisfy { $0 is String }, "no nulls, flat strings")
        #expect(body["platform"] as? String == "iOS")
        #expect(body["osVersion"] as? String == "18.1")
        #expect(body["deviceModel"] as? String == "iPhone")
        #expect(body["language"] as? String == "en-US")
    }

    @Test(arguments: [
        ("opl_abc123", "opl_abc123"),
        ("  opl_abc123\n", "opl_abc123"),
        ("https://links.acme.test/acme/welcome?opl_click=opl_fromlink", "opl_fromlink"),
        ("https://links.acme.test/acme/welcome?a=1&opl_click=opl_x%5Fy", "opl_x_y"),
        ("https://links.acme.test/acme/welcome?opl_click=opl_old&opl_click=opl_new", "opl_new"),
    ])
    func clipboardTokenIsCollected(_ clipboard: String, _ token: String) async throws {
        let body = try await matchBody(clipboard: clipboard)
        #expect(body["clipboardToken"] as? String == token)
        #expect(body.count == 6)
    }

    @Test(arguments: [
        "opl_" + String(repeating: "x", count: 97),  // 101 chars
        "token opl_abc",
        "https://links.acme.test/acme/welcome?opl_click=notatoken",
        "",
    ])
    func clipboardWithoutATokenIsOmitted(_ clipboard: String) async throws {
        let body = try await matchBody(clipboard: clipboard)
        #expect(body["clipboardToken"] == nil)
        #expect(body.count == 5)
    }

    @Test func auditHeadersAndBearerOnlyOnSDKEndpoints() async throws {
        let transport = StubTransport()
        let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport))
        await sdk.start()
        try await sdk.setIdentity(externalId: "user-4711")
        try await sdk.clearIdentity()
        try await sdk.trackEvent(name: "purchase", properties: ["sku": "A1"])
        await sdk.waitForBackgroundWork()
        let requests = transport.requests
        #expect(Set(requests.map(\.context.endpoint)) == [.match, .session, .identity, .identityClear, .events])
        for recorded in requests {
            let headers = recorded.request.headers
            #expect(headers["X-API-Key"] == Fixture.apiKey)
            #expect(headers["X-OptoLink-SDK"] == "ios/0.1.0")
            #expect(headers["Content-Type"] == "application/json")
            #expect(recorded.request.method == "POST")
            let isSDK = recorded.request.url.path.hasPrefix("/sdk/")
            #expect(headers["Authorization"] == (isSDK ? "Bearer \(Fixture.apiKey)" : nil))
        }
    }

    @Test func telemetryBodies() async throws {
        let transport = StubTransport()
        let sdk = OptoLink(
            config: Fixture.config(), environment: Fixture.environment(transport, store: Fixture.launchedStore()))
        await sdk.start()
        await sdk.waitForBackgroundWork()
        try await sdk.setIdentity(externalId: "user-4711")
        try await sdk.clearIdentity()
        try await sdk.trackEvent(name: "purchase", properties: ["sku": "A1", "opl_corr": "run:1:7"])
        let id = sdk.deviceId
        let session = try #require(transport.requests(for: .session).first?.jsonBody as? [String: String])
        #expect(session == ["deviceId": id, "platform": "iOS", "osVersion": "18.1", "sdkVersion": "0.1.0"])
        #expect(transport.requests(for: .session).first?.request.url.path == "/sdk/session")
        let identity = try #require(transport.requests(for: .identity).first?.jsonBody as? [String: String])
        #expect(identity == ["deviceId": id, "externalId": "user-4711"])
        let clear = try #require(transport.requests(for: .identityClear).first)
        #expect(clear.jsonBody as? [String: String] == ["deviceId": id])
        #expect(clear.request.url.path == "/sdk/identity/clear")
        let event = try #require(transport.requests(for: .events).first?.jsonBody)
        #expect(event["deviceId"] as? String == id)
        #expect(event["eventName"] as? String == "purchase")
        #expect(event["properties"] as? [String: String] == ["sku": "A1", "opl_corr": "run:1:7"])
    }

    /// Records the order middlewares run in and the contexts they see.
    struct Tracing: OptoLinkMiddleware {
        let name: String
        let trail: TrailBox

        func intercept(
            _ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext,
            next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
        ) async throws -> OptoLinkHTTPResponse {
            trail.append("\(name)>\(context.endpoint.rawValue)#\(context.callId).\(context.attempt)")
            var request = request
            request.headers["X-Trace", default: ""] += name
            let response = try await next(request, context)
            trail.append("\(name)<\(response.status)")
            return response
        }
    }

    /// A thread-safe list of trace lines. `@unchecked Sendable`: `lines` is only touched
    /// while `lock` is held.
    final class TrailBox: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []

        func append(_ line: String) {
            lock.lock()
            defer { lock.unlock() }
            lines.append(line)
        }

        var all: [String] {
            lock.lock()
            defer { lock.unlock() }
            return lines
        }
    }

    @Test func middlewaresWrapEveryAttemptFirstOutermost() async throws {
        let transport = StubTransport()
        transport.enqueue([.status(503, Fixture.serverError), .status(201, Fixture.missBody)], for: .match)
        let trail = TrailBox()
        let sdk = OptoLink(
            config: Fixture.config(),
            environment: Fixture.environment(
                transport, store: Fixture.launchedStore(),
                middlewares: [Tracing(name: "A", trail: trail), Tracing(name: "B", trail: trail)], label: "vd-42"))
        _ = try await sdk.resolveDeferredLink()
        #expect(
            trail.all == [
                "A>match#1.1", "B>match#1.1", "B<503", "A<503", "A>match#1.2", "B>match#1.2", "B<201", "A<201",
            ])
        #expect(transport.requests.allSatisfy { $0.request.headers["X-Trace"] == "AB" })
        let contexts = transport.requests.map(\.context)
        #expect(
            contexts == [
                OptoLinkRequestContext(
                    endpoint: .match, callId: 1, attempt: 1, instanceLabel: "vd-42", timeout: .seconds(10)),
                OptoLinkRequestContext(
                    endpoint: .match, callId: 1, attempt: 2, instanceLabel: "vd-42", timeout: .seconds(10)),
            ])
    }

    @Test func callIdsIncreasePerPublicCallAndSessionGetsItsOwn() async throws {
        let transport = StubTransport()
        let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport))
        await sdk.start()
        await sdk.waitForBackgroundWork()
        try await sdk.trackEvent(name: "a")
        try await sdk.trackEvent(name: "b")
        #expect(transport.requests.map(\.context.callId) == [1, 2, 3, 4])
        #expect(transport.requests.map(\.context.endpoint) == [.match, .session, .events, .events])
    }
}

/// A middleware sees a lost deadline race as `URLError(.timedOut)` from `next`.
@Suite(.timeLimit(.minutes(1)))
struct MiddlewareDeadlineTests {
    struct OutcomeRecorder: OptoLinkMiddleware {
        let trail: RequestShapeTests.TrailBox

        func intercept(
            _ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext,
            next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
        ) async throws -> OptoLinkHTTPResponse {
            do {
                let response = try await next(request, context)
                trail.append("\(context.attempt):\(response.status)")
                return response
            } catch let error as URLError {
                trail.append("\(context.attempt):\(error.code == .timedOut ? "timed_out" : "other")")
                throw error
            }
        }
    }

    @Test func recorderSeesTimeouts() async throws {
        let transport = StubTransport()
        transport.enqueue([.hang, .status(200, #"{"ok":true}"#)], for: .events)
        let trail = RequestShapeTests.TrailBox()
        let clock = ManualClock()
        let sdk = OptoLink(
            config: Fixture.config(),
            environment: Fixture.environment(transport, clock: clock, middlewares: [OutcomeRecorder(trail: trail)]))
        let call = Task { try await sdk.trackEvent(name: "open") }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(10))  // the first attempt's deadline fires
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(500))  // back-off
        try await call.value
        #expect(trail.all == ["1:timed_out", "2:200"])
    }
}

/// `StubTransport.Reply.compute` sees the request (used by other targets' tests).
@Test func stubComputeRepliesSeeTheRequest() async throws {
    let transport = StubTransport()
    transport.setDefault(
        .compute { request, context in
            #expect(context.endpoint == .identity)
            return OptoLinkHTTPResponse(status: 200, body: request.body ?? Data())
        }, for: .identity)
    let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport))
    try await sdk.setIdentity(externalId: "echo")
    #expect(transport.requests(for: .identity).count == 1)
}
