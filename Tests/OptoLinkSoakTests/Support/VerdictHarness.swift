import Foundation
import OptoLink
import OptoLinkHTTP
import OptoLinkStaging
import Synchronization
import Testing

import OptoLinkSoak
import SoakRecords
import SoakVerdicts

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Hands each SDK attempt straight to the emulator's request handler (the same code the
/// emulator's socket server runs), so the verdict integration tests need no sockets.
struct InProcessBackendTransport: OptoLinkTransport {
    let backend: StagingBackend
    /// In virtual time: the clock a delayed answer sleeps on (and tells of each request).
    var clock: SteppingClock? = nil

    func send(_ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse {
        clock?.touch()
        var headers = HTTPHeaders()
        for (name, value) in request.headers { headers.add(name, value) }
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        let target =
            (components?.percentEncodedPath ?? request.url.path)
            + (components?.percentEncodedQuery.map { "?\($0)" } ?? "")
        let http = HTTPRequest(
            method: request.method, target: target, headers: headers, body: Array(request.body ?? Data()))
        let peer = HTTPConnectionInfo(peerAddress: "127.0.0.1", peerPort: 40_000, connectionId: context.callId)
        switch backend.handle(http, peer) {
        case .respond(let response):
            return Self.convert(response)
        case .respondAfter(let response, let delay):
            if let clock {
                try await clock.sleep(for: delay)
            } else {
                try await Task.sleep(for: delay)
            }
            return Self.convert(response)
        case .reset:
            throw URLError(.networkConnectionLost)
        case .close:
            throw URLError(.badServerResponse)
        }
    }

    static func convert(_ response: HTTPResponse) -> OptoLinkHTTPResponse {
        var headers: [String: String] = [:]
        for (name, value) in response.headers { headers[name] = value }
        return OptoLinkHTTPResponse(status: response.status, headers: headers, body: Data(response.body))
    }
}

enum VerdictHarnessError: Error {
    case clickFailed(String)
}

/// A misbehaving client: retries a 429 after `delay` instead of its `Retry-After`.
struct IgnoresRetryAfterPolicy: OptoLinkRetryPolicy {
    var delay: OptoLinkDuration = .milliseconds(50)

    func decide(after failure: OptoLinkAttemptFailure, endpoint: OptoLinkEndpoint, retryIndex: Int)
        -> OptoLinkRetryDecision
    {
        if case .status(429, _) = failure, endpoint != .session { return .retry(after: delay) }
        return OptoLinkContractRetryPolicy().decide(after: failure, endpoint: endpoint, retryIndex: retryIndex)
    }
}

/// A misbehaving client: retries a 5xx on the telemetry endpoints too.
struct RetriesTelemetry5xxPolicy: OptoLinkRetryPolicy {
    func decide(after failure: OptoLinkAttemptFailure, endpoint: OptoLinkEndpoint, retryIndex: Int)
        -> OptoLinkRetryDecision
    {
        if case .status(let status, _) = failure, (500..<600).contains(status),
            [.events, .identity, .identityClear].contains(endpoint)
        {
            return .retry(after: .milliseconds(50))
        }
        return OptoLinkContractRetryPolicy().decide(after: failure, endpoint: endpoint, retryIndex: retryIndex)
    }
}

/// A misbehaving client: never retries anything.
struct NeverRetriesPolicy: OptoLinkRetryPolicy {
    func decide(after failure: OptoLinkAttemptFailure, endpoint: OptoLinkEndpoint, retryIndex: Int)
        -> OptoLinkRetryDecision
    {
        .stop
    }
}

/// A misbehaving transport layer: sends every event write twice and returns the second answer.
struct DuplicatesEventWritesMiddleware: OptoLinkMiddleware {
    func intercept(
        _ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext,
        next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
    ) async throws -> OptoLinkHTTPResponse {
        guard context.endpoint == .events else { return try await next(request, context) }
        _ = try await next(request, context)
        return try await next(request, context)
    }
}

/// A proxy in the path that rewrites every 429 body: `message` replaces the envelope's message.
struct Rewrites429Middleware: OptoLinkMiddleware {
    let message: String

    func intercept(
        _ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext,
        next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
    ) async throws -> OptoLinkHTTPResponse {
        var response = try await next(request, context)
        guard response.status == 429 else { return response }
        let envelope = ["statusCode": "429", "error": "Too Many Requests", "message": message]
        response.body = (try? JSONSerialization.data(withJSONObject: envelope)) ?? Data()
        return response
    }
}

/// A test-controlled clock shared by the emulator and the recorder (seconds since run start).
final class VirtualRunTime: Sendable {
    private let seconds = Mutex(0.0)
    static let epoch = 1_800_000_000.0

    var now: Double { seconds.withLock { $0 } }
    func set(_ value: Double) { seconds.withLock { $0 = value } }
    var stagingClock: StagingClock { StagingClock { [self] in Self.epoch + now } }
}

/// Records each attempt at the virtual time it happened (zero duration: the in-process
/// emulator answers within the same instant), so the limit oracle sees exact arrivals.
final class VirtualTimeRecorder: OptoLinkMiddleware, Sendable {
    let time: VirtualRunTime
    private let rows = Mutex<[AttemptRecord]>([])

    init(time: VirtualRunTime) { self.time = time }

    var attempts: [AttemptRecord] { rows.withLock { $0 } }

    func intercept(
        _ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext,
        next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
    ) async throws -> OptoLinkHTTPResponse {
        let start = time.now
        var record = AttemptRecord(
            device: DeviceLaunch(label: context.instanceLabel).device, launch: 1, callId: context.callId,
            endpoint: ContractEndpoint(context.endpoint),
            attempt: context.attempt, intendedStart: start, actualStart: start, end: start, status: nil,
            errorKind: .other, retryAfterSeconds: nil, requestBytes: 0, responseBytes: 0, correlationId: nil,
            clientIP: request.headers["X-Forwarded-For"])
        do {
            let response = try await next(request, context)
            record.end = time.now
            record.status = response.status
            record.errorKind = nil
            record.retryAfterSeconds = AttemptClassification.retryAfterSeconds(
                status: response.status, body: response.body)
            rows.withLock { $0.append(record) }
            return response
        } catch {
            record.end = time.now
            rows.withLock { $0.append(record) }
            throw error
        }
    }
}

/// One short run against an in-process emulator: real SDK instances (one per virtual device),
/// the soak recorder as their recording middleware, then the verdicts over what it wrote.
final class VerdictRun: Sendable {
    static let runId = "vrun"
    let backend: StagingBackend
    let recorder: SoakRecorder
    let directory: URL
    let maxRetries: Int

    /// With virtual time, the emulator and the attempt rows run on `virtualTime` (set by the test).
    let virtualRecorder: VirtualTimeRecorder?

    /// `limits`: the emulator's; everything not given is far out of reach.
    /// With `stepping`, the whole run is in virtual time: the SDK sleeps, the emulator's
    /// limiter and the recorder all read one ``SteppingClock``, which advances whenever every
    /// device is asleep (a back-off of N seconds takes no real time, and is exact).
    let stepping: SteppingClock?
    private let driving: Task<Void, Never>?

    init(
        limits: StagingLimits = VerdictRun.relaxedLimits, faults: StagingFaults = .none, maxRetries: Int = 2,
        virtualTime: VirtualRunTime? = nil, stepping: Bool = false
    ) throws {
        let clock = stepping ? SteppingClock() : nil
        self.stepping = clock
        driving = clock.map { clock in Task { await clock.drive() } }
        let stagingClock = clock.map { clock in StagingClock { VirtualRunTime.epoch + clock.seconds } }
        backend = StagingBackend(
            configuration: StagingConfiguration(trustForwardedFor: true, limits: limits, faults: faults),
            clock: stagingClock ?? virtualTime?.stagingClock ?? .system)
        virtualRecorder = virtualTime.map(VirtualTimeRecorder.init(time:))
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("verdicts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        recorder = try SoakRecorder(
            directory: directory,
            timeline: clock.map { RunTimeline(clock: $0, epoch: VirtualRunTime.epoch) } ?? RunTimeline())
        self.maxRetries = maxRetries
    }

    deinit {
        driving?.cancel()
        try? FileManager.default.removeItem(at: directory)
    }

    static let relaxedLimits = StagingLimits(
        match: .init(limit: 100_000, windowSeconds: 60), data: .init(limit: 100_000, windowSeconds: 60),
        sdk: .init(limit: 100_000, windowSeconds: 60), events: .init(limit: 100_000, windowSeconds: 60))

    /// A first-launched virtual device `d00000<index>` behind `ip`.
    func device(
        _ index: Int, ip: String? = nil, policy: any OptoLinkRetryPolicy = OptoLinkContractRetryPolicy(),
        middlewares: [any OptoLinkMiddleware] = [], clipboard: String? = nil,
        deviceInfo: OptoLinkDeviceInfo = OptoLinkDeviceInfo(osVersion: "18.1", deviceModel: "iPhone", language: "en-US")
    ) -> OptoLink {
        var config = OptoLinkConfig(
            apiKey: "opl_sdk_test_acme_client", orgKey: "acme", baseUrl: URL(string: "http://127.0.0.1:9")!)
        config.maxRetries = maxRetries
        config.timeout = 5
        let ipMiddleware: [any OptoLinkMiddleware] = ip.map { [ForwardedForMiddleware(clientIP: $0)] } ?? []
        let environment = OptoLinkEnvironment(
            store: InMemoryKeyValueStore(), pasteboard: InMemoryPasteboard(clipboard), deviceInfo: deviceInfo,
            transport: InProcessBackendTransport(backend: backend, clock: stepping),
            middlewares: ipMiddleware + [virtualRecorder ?? recorder] + middlewares,
            clock: stepping.map { OptoLinkSwiftClock($0) as any OptoLinkClock } ?? OptoLinkSystemClock(),
            retryPolicy: policy,
            label: DeviceLaunch(device: Self.deviceName(index), launch: 1).label)
        return OptoLink(config: config, environment: environment)
    }

    static func deviceName(_ index: Int) -> String { String(format: "d%06d", index) }

    static let safariUserAgent =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
        + "Version/18.1 Mobile/15E148 Safari/604.1"

    /// A Safari click on `/acme/<code>` from `ip`; returns the clipboard payload of the redirect page.
    func click(_ code: String, ip: String) throws -> String {
        let headers: HTTPHeaders = [
            "User-Agent": Self.safariUserAgent, "Accept-Language": "en-US,en;q=0.9", "X-Forwarded-For": ip,
            "Host": "links.acme.test",
        ]
        let peer = HTTPConnectionInfo(peerAddress: "127.0.0.1", peerPort: 40_001, connectionId: 0)
        guard
            case .respond(let response) = backend.handle(
                HTTPRequest(method: "GET", target: "/acme/\(code)", headers: headers), peer),
            response.status == 200
        else { throw VerdictHarnessError.clickFailed(code) }
        let html = String(decoding: response.body, as: UTF8.self)
        guard let marker = html.range(of: #"id="cbt""#), let value = html[marker.upperBound...].range(of: #"value=""#)
        else { throw VerdictHarnessError.clickFailed(code) }
        let escaped = html[value.upperBound...].prefix { $0 != "\"" }
        return escaped.replacingOccurrences(of: "&amp;", with: "&")
    }

    /// The deferred link `instance` emitted at start, or `nil` when none came within 200 ms.
    static func emittedLink(_ instance: OptoLink) async -> OptoLinkData? {
        await withTaskGroup(of: OptoLinkData?.self) { group in
            group.addTask {
                for await link in instance.links { return link }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(200))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Sends one event carrying the device's correlation id; returns whether it succeeded.
    @discardableResult
    static func trackEvent(_ instance: OptoLink, device: Int, sequence: Int) async -> Bool {
        do {
            try await instance.trackEvent(
                name: "purchase", properties: ["opl_corr": "\(runId):\(deviceName(device)):\(sequence)"])
            return true
        } catch {
            return false
        }
    }

    /// Finishes the recorder and judges the run.
    func verdicts(_ expect: VerdictsConfiguration = VerdictsConfiguration()) throws -> (
        report: VerdictsReport, metrics: [String: Double], attempts: [AttemptRecord]
    ) {
        recorder.finish()
        var attempts = try ReportCSVReader.attempts(directory.appendingPathComponent("attempts.csv"))
        var calls = try ReportCSVReader.calls(directory.appendingPathComponent("calls.csv"))
        if let virtualRecorder {
            attempts = virtualRecorder.attempts
            calls = []
        }
        let report = Verdicts.evaluate(
            VerdictInputs(
                attempts: attempts, calls: calls, ledger: backend.ledger().map(LedgerRow.init),
                configuration: expect, maxRetries: maxRetries, runStartEpoch: recorder.timeline.originEpoch))
        return (report, report.metrics(), attempts)
    }
}

/// Starts `count` devices (first launch: /match, then /sdk/session on the miss) concurrently.
func startDevices(
    _ run: VerdictRun, count: Int, policy: any OptoLinkRetryPolicy = OptoLinkContractRetryPolicy(),
    middlewares: [any OptoLinkMiddleware] = [], ip: (Int) -> String? = { _ in nil }
) async -> [OptoLink] {
    let instances = (1...count).map { run.device($0, ip: ip($0), policy: policy, middlewares: middlewares) }
    await withTaskGroup(of: Void.self) { group in
        for instance in instances {
            group.addTask {
                await instance.start()
                await instance.waitForBackgroundWork()
            }
        }
    }
    return instances
}

/// Every device sends one event at once.
func sendOneEventEach(_ instances: [OptoLink]) async {
    await withTaskGroup(of: Void.self) { group in
        for (index, instance) in instances.enumerated() {
            group.addTask { await VerdictRun.trackEvent(instance, device: index + 1, sequence: 1) }
        }
    }
}
