import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The one retry loop every endpoint goes through (docs/CONTRACT.md §2, "Retry matrix").
///
/// One public call = one budget of `maxRetries + 1` attempts. Each attempt runs through
/// the middlewares to the transport, whose call is raced against the per-attempt deadline
/// on the injected clock. After a failure the policy decides; the loop honours whatever it says
/// (including a delay that ignores Retry-After) but never exceeds the budget. Sleeps go
/// through the injected ``OptoLinkClock``, whatever the clock and the transport.
///
/// With a Swift 6.2 compiler or later, the SDK's functions below its public calls (this loop, the
/// API client, the telemetry client, `tracked`) are `nonisolated(nonsending)`: they run where the
/// public call runs (which hops off its caller's actor, as a nonisolated `async` function does),
/// without a task switch of their own on entry. Older compilers (Swift 6.0, 6.1) lack the modifier and build them as plain
/// `nonisolated` functions: the same behaviour, with a task switch on entry (`#if compiler(>=6.2)`).
/// `package`, not `public`: this package's tests build the middleware chain with
/// ``chain(_:transport:capabilities:deadline:clock:)``; apps never see it.
package struct OptoLinkRetryLoop: Sendable {
    package typealias Send =
        @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse

    let send: Send
    let clock: any OptoLinkClock
    let policy: any OptoLinkRetryPolicy
    let maxRetries: Int
    /// The per-attempt deadline; `nil` disables the SDK's own deadline.
    let timeout: OptoLinkDuration?
    let label: String?
    let log: OptoLinkLog

    init(environment: OptoLinkEnvironment, config: OptoLinkConfig, log: OptoLinkLog) {
        let timeout = Self.deadline(seconds: config.timeout)
        self.timeout = timeout
        self.clock = environment.clock
        self.policy = environment.retryPolicy
        self.maxRetries = max(0, config.maxRetries)
        self.send = Self.chain(
            environment.middlewares, transport: environment.transport,
            capabilities: environment.transportCapabilities, deadline: timeout, clock: environment.clock)
        self.label = environment.label
        self.log = log
    }

    /// The per-attempt deadline for a configured timeout in seconds (rounded up to whole
    /// milliseconds, capped at one year); `nil` (no deadline) when it is not positive or not finite.
    static func deadline(seconds: TimeInterval) -> OptoLinkDuration? {
        guard seconds.isFinite, seconds > 0 else { return nil }
        return .milliseconds(Int64((min(seconds, 31_536_000) * 1000).rounded(.up)))
    }

    /// Folds the middlewares around the transport: the first middleware is outermost. The
    /// innermost step races the transport call against `deadline` on `clock` (the loser is
    /// cancelled), so middlewares see a lost race as `URLError(.timedOut)` thrown by `next`.
    /// A transport that declares ``OptoLinkTransportCapabilities/enforcesDeadline`` runs that
    /// deadline itself and is called directly (it throws the same `URLError(.timedOut)`).
    package static func chain(
        _ middlewares: [any OptoLinkMiddleware], transport: any OptoLinkTransport,
        capabilities: OptoLinkTransportCapabilities, deadline: OptoLinkDuration?, clock: any OptoLinkClock
    ) -> Send {
        let selfTimed = capabilities.enforcesDeadline
        var next: Send = { request, context in
            guard let deadline, !selfTimed else { return try await transport.send(request, context: context) }
            return try await OptoLinkAttemptDeadline.race(deadline, on: clock) {
                try await transport.send(request, context: context)
            }
        }
        for middleware in middlewares.reversed() {
            let inner = next
            next = { request, context in try await middleware.intercept(request, context: context, next: inner) }
        }
        return next
    }

    /// Runs one public call's attempts and returns the first 2xx response.
    ///
    /// - Throws: ``OptoLinkApiError`` for the last non-2xx response, or
    ///   ``OptoLinkConnectionError`` when the last attempt got no response (a lost deadline
    ///   race is `.timedOut`), once the policy stops or the budget is spent;
    ///   ``OptoLinkConnectionError`` (`.cancelled`) when the task is cancelled, or the instance
    ///   disposed under an ``OptoLinkCallScope``: no attempt starts after that, and a back-off
    ///   sleep ends at once.
    /// - Parameter scope: the call's ``OptoLinkCallScope`` when it runs in its caller's task;
    ///   each attempt's context carries it to the transport.
    #if compiler(>=6.2)
        nonisolated(nonsending) func run(
            _ request: OptoLinkHTTPRequest, endpoint: OptoLinkEndpoint, callId: UInt64, scope: OptoLinkCallScope? = nil
        ) async throws -> OptoLinkHTTPResponse {
            var attempt = 1
            while true {
                let context = try context(endpoint, callId, attempt, scope)
                let result: Result<OptoLinkHTTPResponse, any Error>
                do {
                    result = .success(try await send(request, context))
                } catch {
                    result = .failure(error)
                }
                switch step(after: result, endpoint: endpoint, callId: callId, attempt: attempt, scope: scope) {
                case .done(let response): return response
                case .fail(let error): throw error
                case .wait(let delay): try await wait(delay, scope: scope)
                }
                attempt += 1
            }
        }
    #else
        func run(
            _ request: OptoLinkHTTPRequest, endpoint: OptoLinkEndpoint, callId: UInt64, scope: OptoLinkCallScope? = nil
        ) async throws -> OptoLinkHTTPResponse {
            var attempt = 1
            while true {
                let context = try context(endpoint, callId, attempt, scope)
                let result: Result<OptoLinkHTTPResponse, any Error>
                do {
                    result = .success(try await send(request, context))
                } catch {
                    result = .failure(error)
                }
                switch step(after: result, endpoint: endpoint, callId: callId, attempt: attempt, scope: scope) {
                case .done(let response): return response
                case .fail(let error): throw error
                case .wait(let delay): try await wait(delay, scope: scope)
                }
                attempt += 1
            }
        }
    #endif

    /// What follows one attempt of `run`.
    enum Step {
        /// A 2xx response: the call's result.
        case done(OptoLinkHTTPResponse)
        /// The call ends with this error (policy, budget or cancellation).
        case fail(any Error)
        /// Sleep this long, then send the next attempt.
        case wait(OptoLinkDuration)
    }

    /// The context of attempt number `attempt`.
    ///
    /// - Throws: ``OptoLinkConnectionError`` (`.cancelled`) when the call is cancelled (caller
    ///   cancelled, instance disposed): it sends nothing more.
    func context(_ endpoint: OptoLinkEndpoint, _ callId: UInt64, _ attempt: Int, _ scope: OptoLinkCallScope?) throws
        -> OptoLinkRequestContext
    {
        if Self.isCancelled(scope) { throw OptoLinkConnectionError(underlying: URLError(.cancelled)) }
        var context = OptoLinkRequestContext(
            endpoint: endpoint, callId: callId, attempt: attempt, instanceLabel: label, timeout: timeout ?? .zero)
        context.callScope = scope
        return context
    }

    /// Decides what follows attempt number `attempt` from its outcome: the response, the policy's
    /// decision, the budget and cancellation, logging every failure with the decision taken.
    func step(
        after result: Result<OptoLinkHTTPResponse, any Error>, endpoint: OptoLinkEndpoint, callId: UInt64,
        attempt: Int, scope: OptoLinkCallScope?
    ) -> Step {
        let attempts = maxRetries + 1
        let failure: OptoLinkAttemptFailure
        let error: any OptoLinkError
        switch result {
        case .success(let response):
            if (200...299).contains(response.status) { return .done(response) }
            let apiError = OptoLinkApiError.from(status: response.status, body: response.body)
            failure = .status(apiError.status, retryAfterSeconds: apiError.retryAfterSeconds)
            error = apiError
        case .failure(let apiError as OptoLinkApiError):
            // A middleware may short-circuit with an API error; treat it like a response.
            failure = .status(apiError.status, retryAfterSeconds: apiError.retryAfterSeconds)
            error = apiError
        case .failure(let thrown):
            let connection = Self.connectionError(thrown)
            failure = .connection(connection.underlying.code)
            error = connection
        }
        guard attempt < attempts else {
            logFailure(endpoint, callId, attempt, of: attempts, error, then: "no budget left")
            return .fail(error)
        }
        if Self.isCancelled(scope) {
            logFailure(endpoint, callId, attempt, of: attempts, error, then: "cancelled; no retry")
            return .fail(OptoLinkConnectionError(underlying: URLError(.cancelled)))
        }
        switch policy.decide(after: failure, endpoint: endpoint, retryIndex: attempt - 1) {
        case .stop:
            logFailure(endpoint, callId, attempt, of: attempts, error, then: "policy says stop")
            return .fail(error)
        case .retry(let delay):
            let delay = min(max(.zero, delay), OptoLinkBackoff.longestWait)
            logFailure(endpoint, callId, attempt, of: attempts, error, then: "retrying after \(delay)")
            return .wait(delay)
        }
    }

    /// The back-off sleep: on the call's scope (so `dispose()` ends it) or on the clock.
    ///
    /// - Throws: ``OptoLinkConnectionError`` (`.cancelled`) when the sleep is cut short.
    func wait(_ delay: OptoLinkDuration, scope: OptoLinkCallScope?) async throws {
        do {
            if let scope {
                try await scope.sleep(for: delay, on: clock)
            } else {
                try await clock.sleep(for: delay)
            }
        } catch {
            throw OptoLinkConnectionError(underlying: URLError(.cancelled))
        }
    }

    /// Whether the call is cancelled: its task, or the instance its scope belongs to (``OptoLinkCallScope``).
    static func isCancelled(_ scope: OptoLinkCallScope?) -> Bool {
        Task.isCancelled || (scope?.isCancelled ?? false)
    }

    private func logFailure(
        _ endpoint: OptoLinkEndpoint, _ callId: UInt64, _ attempt: Int, of attempts: Int, _ error: any OptoLinkError,
        then decision: @autoclosure () -> String
    ) {
        guard log.isEnabled else { return }
        log.info(
            "\(endpoint.rawValue) call \(callId): attempt \(attempt)/\(attempts) failed (\(Self.label(of: error))); "
                + decision())
    }

    /// Maps anything a transport or middleware threw to a connection error: `URLError`
    /// kept, cancellation → `.cancelled`, anything else → `.unknown`.
    static func connectionError(_ error: any Error) -> OptoLinkConnectionError {
        switch error {
        case let error as OptoLinkConnectionError: error
        case let error as URLError: OptoLinkConnectionError(underlying: error)
        case is CancellationError: OptoLinkConnectionError(underlying: URLError(.cancelled))
        default: OptoLinkConnectionError(underlying: URLError(.unknown))
        }
    }

    static func label(of error: any OptoLinkError) -> String {
        switch error {
        case let error as OptoLinkApiError: error.shortDescription
        case let error as OptoLinkConnectionError: error.shortDescription
        default: "error"
        }
    }
}
