import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP request as the SDK hands it to a transport.
///
/// Headers use the exact names of the wire contract (`X-API-Key`, `X-OptoLink-SDK`,
/// `Authorization`, `Content-Type`). `body` is UTF-8 JSON or `nil` for `GET`.
public struct OptoLinkHTTPRequest: Sendable, Equatable {
    /// `GET` or `POST`.
    public var method: String
    /// The absolute URL: `baseUrl` joined with the endpoint path and query.
    public var url: URL
    /// Header name → value.
    public var headers: [String: String]
    /// The request body in bytes, or `nil`.
    public var body: Data?

    /// A request as the SDK builds it (docs/CONTRACT.md §1, "Endpoints").
    ///
    /// - Parameters:
    ///   - method: `GET` or `POST`.
    ///   - url: the absolute URL.
    ///   - headers: header name → value.
    ///   - body: the JSON body in bytes, or `nil`.
    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// One HTTP response as a transport hands it back. Any status, 2xx or not, is a response:
/// a transport throws only when no response arrived.
public struct OptoLinkHTTPResponse: Sendable, Equatable {
    /// The HTTP status code.
    public var status: Int
    /// Header name → value (names as the server sent them).
    public var headers: [String: String]
    /// The body in bytes (possibly empty).
    public var body: Data

    /// A response as a transport hands it back.
    ///
    /// - Parameters:
    ///   - status: the HTTP status code, any value (2xx or not).
    ///   - headers: header name → value.
    ///   - body: the body in bytes; empty by default.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// The backend endpoints the SDK calls. Each belongs to one retry class
/// (docs/CONTRACT.md §2, "Retry matrix").
public enum OptoLinkEndpoint: String, Sendable, CaseIterable, Codable {
    /// `POST /match` — the first-launch deferred match. Repeat-safe.
    case match
    /// `GET /{orgKey}/{shortCode}/data` — Universal Link resolution. Repeat-safe.
    case data
    /// `POST /sdk/session` — fire-and-forget check-in. Never retried.
    case session
    /// `POST /sdk/identity`. Telemetry.
    case identity
    /// `POST /sdk/identity/clear`. Telemetry.
    case identityClear = "identity_clear"
    /// `POST /sdk/events`. Telemetry.
    case events

    /// The column of the retry matrix this endpoint follows.
    public var retryClass: OptoLinkRetryClass {
        switch self {
        case .match, .data: .repeatSafe
        case .identity, .identityClear, .events: .telemetry
        case .session: .session
        }
    }
}

/// The three columns of the retry matrix (docs/CONTRACT.md §2).
public enum OptoLinkRetryClass: String, Sendable, CaseIterable, Codable {
    /// `/match`, `/data`: retry connection errors, timeouts, 429 and 5xx.
    case repeatSafe = "repeat_safe"
    /// identity, clear, events: retry connection errors, timeouts and 429; never 5xx.
    case telemetry
    /// `/sdk/session`: never retried; failures are logged.
    case session
}

/// What a transport and its middlewares learn about the attempt they carry.
public struct OptoLinkRequestContext: Sendable, Equatable {
    /// Which endpoint this attempt targets.
    public var endpoint: OptoLinkEndpoint
    /// Identifies the public SDK call this attempt belongs to; unique within one
    /// `OptoLink` instance, increasing from 1. Pair it with `instanceLabel` across instances.
    public var callId: UInt64
    /// 1 for the first attempt of a call, 2 for its first retry, and so on.
    public var attempt: Int
    /// The label of the instance's environment (`OptoLinkEnvironment.label`), e.g. a
    /// virtual device id in the soak tester; `nil` for the singleton.
    public var instanceLabel: String?
    /// The per-attempt deadline the SDK enforces (from `OptoLinkConfig.timeout`); zero: none.
    public var attemptTimeout: OptoLinkDuration
    /// The public call's scope when it runs in its caller's task over a transport that declares
    /// ``OptoLinkTransportCapabilities/registersCallScope`` (which registers its request there), else `nil`.
    package var callScope: OptoLinkCallScope?

    /// The context of one attempt.
    ///
    /// - Parameters:
    ///   - endpoint: the endpoint the attempt targets.
    ///   - callId: the public call's id within its instance, from 1.
    ///   - attempt: 1 for the first attempt, 2 for the first retry, …
    ///   - instanceLabel: the environment's label (a virtual device id), or `nil`.
    ///   - timeout: the per-attempt deadline (docs/CONTRACT.md §2, "Timeout per attempt").
    public init(
        endpoint: OptoLinkEndpoint,
        callId: UInt64,
        attempt: Int,
        instanceLabel: String? = nil,
        timeout: OptoLinkDuration
    ) {
        self.endpoint = endpoint
        self.callId = callId
        self.attempt = attempt
        self.instanceLabel = instanceLabel
        self.attemptTimeout = timeout
    }
}

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
extension OptoLinkRequestContext {
    /// ``attemptTimeout`` as a Swift `Duration`.
    public var timeout: Duration {
        get { attemptTimeout.duration }
        set { attemptTimeout = OptoLinkDuration(newValue) }
    }
}

/// The HTTP seam: sends one request and returns its response.
///
/// - Throws: `URLError` when no HTTP response arrived (refused, reset, timed out,
///   cancelled). A non-2xx status is a response, not an error. Any other error type is
///   treated by the SDK as `URLError(.unknown)`.
public protocol OptoLinkTransport: Sendable {
    /// Sends `request` once (never retries: the SDK's retry loop decides that) and returns its response.
    ///
    /// - Parameters:
    ///   - request: method, URL, headers and body, ready to send.
    ///   - context: which endpoint, call and attempt this is, and its deadline; the SDK cancels
    ///     the calling task when `context.attemptTimeout` passes.
    /// - Returns: the response, whatever its status.
    /// - Throws: `URLError` when no response arrived; `URLError(.cancelled)` or
    ///   `CancellationError` once the calling task is cancelled.
    func send(_ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse

    /// What this transport does itself beyond sending (its deadline, the call scope, an executor);
    /// read once when an instance is created. The default is ``OptoLinkTransportCapabilities/none``.
    var capabilities: OptoLinkTransportCapabilities { get }
}

extension OptoLinkTransport {
    /// No capability: the SDK races each attempt against its own deadline.
    public var capabilities: OptoLinkTransportCapabilities { .none }
}

/// Wraps every attempt on its way to the transport (observe, rewrite, short-circuit).
/// Middlewares are applied in array order: the first one sees the request first.
public protocol OptoLinkMiddleware: Sendable {
    /// Handles one attempt: call `next` to pass it on (possibly rewritten), or return a response of its own.
    ///
    /// - Parameters:
    ///   - request: the attempt as the previous middleware passed it.
    ///   - context: which endpoint, call and attempt this is, and its deadline.
    ///   - next: the rest of the chain, ending in the transport.
    /// - Returns: the response the SDK sees.
    /// - Throws: what `next` throws (a `URLError` when no response arrived), or an error of its own,
    ///   which the SDK treats as `URLError(.unknown)`.
    func intercept(
        _ request: OptoLinkHTTPRequest,
        context: OptoLinkRequestContext,
        next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
    ) async throws -> OptoLinkHTTPResponse
}
