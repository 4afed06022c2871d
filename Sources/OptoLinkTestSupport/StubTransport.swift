import Foundation
import OptoLink

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A scripted `OptoLinkTransport` that records every request with its context.
///
/// Each request takes the next reply from, in order: the script of its endpoint
/// (``enqueue(_:for:)``), the shared script (``enqueue(_:)``), the endpoint's default
/// (``setDefault(_:for:)``), else a contract-happy default (`/match` miss 201, `/data`
/// 404 `Link not found`, `/sdk/*` 200). Thread-safe.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
public final class StubTransport: OptoLinkTransport {
    /// What one request gets back.
    public indirect enum Reply: Sendable {
        /// An HTTP response (any status).
        case response(OptoLinkHTTPResponse)
        /// No response: the transport throws this `URLError`.
        case error(URLError)
        /// Suspends until the attempt is cancelled (e.g. by the SDK's deadline), then
        /// throws `URLError(.cancelled)`.
        case hang
        /// Waits for `gate` to open, then answers with `then`.
        case gated(Gate, then: Reply)
        /// Sleeps `delay` on `clock`, then answers with `then`; build it with ``after(_:on:_:)``.
        case delayed(Duration, clock: any Clock<Duration>, then: Reply)
        /// Throws an error that is not a `URLError` (the SDK must map it to `.unknown`).
        case foreignError
        /// Computes the answer from the request (e.g. echo a body, check a header).
        case compute(@Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse)

        /// `reply`, once `delay` has passed on `clock`: pass the clock the SDK instance was given
        /// (its environment's `clock`), so the reply and the SDK's per-attempt deadline race in the
        /// same time. With a ``ManualClock``, ``ManualClock/advance(by:)`` decides which comes first:
        /// a reply after 3 s beats a 10 s timeout, one after 12 s loses to it (the attempt is
        /// cancelled and the transport throws `URLError(.cancelled)`).
        ///
        /// Do not pass a ``RecordingClock``: its sleeps return at once and would show up in its
        /// recorded back-off ``RecordingClock/sleeps``.
        public static func after(_ delay: Duration, on clock: some Clock<Duration>, _ reply: Reply) -> Reply {
            .delayed(delay, clock: clock, then: reply)
        }

        /// A response with a UTF-8 body (`Content-Type: application/json` unless the body
        /// starts with `<`).
        public static func status(_ status: Int, _ body: String = "") -> Reply {
            let type = body.hasPrefix("<") ? "text/html" : "application/json"
            return .response(
                OptoLinkHTTPResponse(status: status, headers: ["Content-Type": type], body: Data(body.utf8)))
        }
    }

    /// One request as the transport saw it.
    public struct Recorded: Sendable {
        public var request: OptoLinkHTTPRequest
        public var context: OptoLinkRequestContext

        /// The JSON body as a dictionary, or `nil` (no body / not an object).
        public var jsonBody: [String: Any]? {
            request.body.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        }
    }

    private struct ForeignError: Error {}

    private struct State: WaitableState {
        var perEndpoint: [OptoLinkEndpoint: [Reply]] = [:]
        var shared: [Reply] = []
        var defaults: [OptoLinkEndpoint: Reply] = [:]
        var recorded: [Recorded] = []
        var perEndpointCount: [OptoLinkEndpoint: Int] = [:]
        var waiters = ConditionWaiters<State>()
    }

    private let state = TestLock(State())

    public init() {}

    /// Appends replies to `endpoint`'s script.
    public func enqueue(_ replies: [Reply], for endpoint: OptoLinkEndpoint) {
        state.withLock { $0.perEndpoint[endpoint, default: []].append(contentsOf: replies) }
    }

    /// Appends replies to the shared script (used in call order by any endpoint without its own).
    public func enqueue(_ replies: [Reply]) {
        state.withLock { $0.shared.append(contentsOf: replies) }
    }

    /// The reply `endpoint` gets once its scripts are empty.
    public func setDefault(_ reply: Reply, for endpoint: OptoLinkEndpoint) {
        state.withLock { $0.defaults[endpoint] = reply }
    }

    /// Every request so far, in arrival order.
    public var requests: [Recorded] { state.withLock { $0.recorded } }

    /// The requests that targeted `endpoint`.
    public func requests(for endpoint: OptoLinkEndpoint) -> [Recorded] {
        requests.filter { $0.context.endpoint == endpoint }
    }

    /// Returns once at least `count` requests have arrived (at once if they already have, or
    /// when the waiting task is cancelled).
    public func waitForRequests(_ count: Int) async {
        await state.wait { $0.recorded.count >= count }
    }

    /// Returns once at least `count` requests have reached `endpoint`, retries included (at once
    /// if they already have, or when the waiting task is cancelled). Suspends without polling or
    /// real sleeps, so it is safe in virtual time.
    public func waitForRequests(_ count: Int, to endpoint: OptoLinkEndpoint) async {
        await state.wait { $0.perEndpointCount[endpoint, default: 0] >= count }
    }

    public func send(_ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext) async throws
        -> OptoLinkHTTPResponse
    {
        let (reply, ready) = state.withLock { state -> (Reply, [CheckedContinuation<Void, Never>]) in
            state.recorded.append(Recorded(request: request, context: context))
            let reply: Reply
            if var script = state.perEndpoint[context.endpoint], !script.isEmpty {
                reply = script.removeFirst()
                state.perEndpoint[context.endpoint] = script
            } else if !state.shared.isEmpty {
                reply = state.shared.removeFirst()
            } else {
                reply = state.defaults[context.endpoint] ?? Self.contractDefault(for: context.endpoint)
            }
            state.perEndpointCount[context.endpoint, default: 0] += 1
            return (reply, state.takeSatisfiedWaiters())
        }
        for waiter in ready { waiter.resume() }
        return try await play(reply, request, context)
    }

    private func play(_ reply: Reply, _ request: OptoLinkHTTPRequest, _ context: OptoLinkRequestContext) async throws
        -> OptoLinkHTTPResponse
    {
        switch reply {
        case .response(let response):
            return response
        case .error(let error):
            throw error
        case .foreignError:
            throw ForeignError()
        case .hang:
            await suspendUntilCancelled()
            throw URLError(.cancelled)
        case .gated(let gate, let then):
            await gate.wait()
            return try await play(then, request, context)
        case .delayed(let delay, let clock, let then):
            do {
                try await clock.sleep(for: delay)
            } catch {
                throw URLError(.cancelled)  // the attempt was cancelled first (its deadline, or the caller)
            }
            return try await play(then, request, context)
        case .compute(let body):
            return try await body(request, context)
        }
    }

    /// The default reply of each endpoint when nothing is scripted.
    public static func contractDefault(for endpoint: OptoLinkEndpoint) -> Reply {
        switch endpoint {
        case .match: .status(201, #"{"matched":false,"matchMethod":"NONE"}"#)
        case .data:
            .status(404, #"{"statusCode":404,"error":"Not Found","message":"Link not found","path":"/data"}"#)
        case .session:
            .status(
                200,
                #"{"ok":true,"deviceId":"d","firstSeenAt":"2026-01-01T00:00:00Z","lastSeenAt":"2026-01-01T00:00:00Z"}"#)
        case .identity: .status(200, #"{"endUserId":"u","rebound":false}"#)
        case .identityClear: .status(200, #"{"cleared":true}"#)
        case .events: .status(200, #"{"ok":true}"#)
        }
    }
}
