import Foundation
import OptoLink
import OptoLinkHTTP
import OptoLinkStaging
import OptoLinkTestSupport
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One attempt as the SDK's middleware chain saw it.
struct ObservedAttempt: Sendable, Equatable {
    var endpoint: OptoLinkEndpoint
    var attempt: Int
    /// The HTTP status, or `nil` when no response arrived.
    var status: Int?
}

/// Records every attempt the SDK makes (the soak tester's recorder is the same idea).
final class AttemptLog: OptoLinkMiddleware {
    private let attempts = Mutex<[ObservedAttempt]>([])

    var all: [ObservedAttempt] { attempts.withLock { $0 } }
    func of(_ endpoint: OptoLinkEndpoint) -> [ObservedAttempt] { all.filter { $0.endpoint == endpoint } }

    func intercept(
        _ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext,
        next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
    ) async throws -> OptoLinkHTTPResponse {
        do {
            let response = try await next(request, context)
            attempts.withLock {
                $0.append(
                    ObservedAttempt(endpoint: context.endpoint, attempt: context.attempt, status: response.status))
            }
            return response
        } catch {
            attempts.withLock {
                $0.append(ObservedAttempt(endpoint: context.endpoint, attempt: context.attempt, status: nil))
            }
            throw error
        }
    }
}

/// Adds `X-Forwarded-For` so one test process stands in for a device with its own IP.
struct ForwardedFor: OptoLinkMiddleware {
    var ip: String

    func intercept(
        _ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext,
        next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
    ) async throws -> OptoLinkHTTPResponse {
        var request = request
        request.headers["X-Forwarded-For"] = ip
        return try await next(request, context)
    }
}

/// The SDK's clock wired to the emulator's virtual time: every back-off or Retry-After
/// sleep advances the emulator by the same amount and returns at once; per-attempt
/// deadlines never fire. So "the client obeyed N" is observable without waiting N seconds.
final class EmulatorLinkedClock: Clock, OptoLinkClock, Sendable {
    typealias Instant = VirtualInstant
    private let state = Mutex<(now: VirtualInstant, sleeps: [OptoLinkDuration])>((VirtualInstant(), []))
    private let time: VirtualTime

    init(_ time: VirtualTime) { self.time = time }

    var now: VirtualInstant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }
    var sleeps: [OptoLinkDuration] { state.withLock { $0.sleeps } }
    var instant: OptoLinkInstant { now.optoLinkInstant }

    func sleep(until deadline: VirtualInstant, tolerance: Duration?) async throws {
        let delta = state.withLock { state in
            let delta = state.now.duration(to: deadline)
            state.sleeps.append(OptoLinkDuration(delta))
            state.now = deadline
            return delta
        }
        let (seconds, attoseconds) = delta.components
        time.advance(Double(seconds) + Double(attoseconds) / 1e18)
    }

    func sleep(until deadline: OptoLinkInstant) async throws {
        try await sleep(until: VirtualInstant(deadline), tolerance: nil)
    }

    /// Per-attempt deadlines never fire.
    func startTimer(until deadline: OptoLinkInstant, expire: @escaping @Sendable () -> Void) -> OptoLinkTimer {
        OptoLinkTimer {}
    }
}

/// Builds isolated SDK instances (virtual devices) against a running emulator.
struct SDKHarness {
    static let transport = URLSessionTransport(configuration: .ephemeral)
    static let fastShutdown = HTTPServer.Configuration(timeouts: .init(shutdownGrace: .milliseconds(300)))

    let server: StagingServer
    let time: VirtualTime

    struct Device {
        var sdk: OptoLink
        var attempts: AttemptLog
        var pasteboard: InMemoryPasteboard
    }

    func device(
        apiKey: String = BackendHarness.clientKey, pasteboard: String? = nil, osVersion: String = "18.1",
        maxRetries: Int = 2, timeout: TimeInterval = 5, clock: (any OptoLinkClock)? = nil,
        middlewares: [any OptoLinkMiddleware] = [], routeCache: Bool = false
    ) -> Device {
        let config = OptoLinkConfig(
            apiKey: apiKey, orgKey: "acme", baseUrl: server.baseURL, timeout: timeout, maxRetries: maxRetries,
            routeCache: routeCache)
        let attempts = AttemptLog()
        let board = InMemoryPasteboard(pasteboard)
        let environment = OptoLinkEnvironment(
            store: InMemoryKeyValueStore(), pasteboard: board,
            deviceInfo: OptoLinkDeviceInfo(osVersion: osVersion, deviceModel: "iPhone", language: "en-US"),
            transport: Self.transport, middlewares: [attempts] + middlewares, clock: clock ?? RecordingClock())
        return Device(sdk: OptoLink(config: config, environment: environment), attempts: attempts, pasteboard: board)
    }

    /// A plain HTTP request (browser clicks, admin routes, hostile bodies).
    func fetch(
        _ method: String, _ pathAndQuery: String, headers: [String: String] = [:], body: Data? = nil
    ) async throws -> (status: Int, body: String) {
        guard let url = URL(string: server.baseURL.absoluteString + pathAndQuery) else { throw HarnessError.noToken }
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        request.httpBody = body
        let (data, response) = try await Self.transport.session.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// A Safari click from this machine; returns the clipboard payload of the redirect page.
    func click(_ code: String = "welcome", userAgent: String = BackendHarness.safariUA) async throws -> String {
        let page = try await fetch(
            "GET", "/acme/\(code)", headers: ["User-Agent": userAgent, "Accept-Language": "en-US,en;q=0.9"])
        guard page.status == 200, let start = page.body.range(of: #"id="cbt" type="text" readonly value=""#) else {
            throw HarnessError.status(page.status)
        }
        let value = page.body[start.upperBound...].prefix { $0 != "\"" }
        return value.replacingOccurrences(of: "&amp;", with: "&")
    }
}

/// Runs `body` against a fresh emulator on an ephemeral port, in virtual emulator time.
func withEmulator<T>(
    _ configuration: StagingConfiguration = StagingConfiguration(),
    _ body: (SDKHarness) async throws -> T
) async throws -> T {
    let time = VirtualTime()
    return try await withStagingServer(configuration, clock: time.clock, http: SDKHarness.fastShutdown) { server in
        try await body(SDKHarness(server: server, time: time))
    }
}

extension OptoLink {
    /// The first link the stream yields (the stream replays the last one).
    func firstLink() async -> OptoLinkData? {
        for await link in links { return link }
        return nil
    }
}

/// Runs `operation` and returns the API error it throws.
func apiError(_ operation: () async throws -> Void) async -> OptoLinkApiError? {
    do {
        try await operation()
        return nil
    } catch let error as OptoLinkApiError {
        return error
    } catch {
        return nil
    }
}
