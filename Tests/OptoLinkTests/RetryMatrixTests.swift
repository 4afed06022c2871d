import Foundation
import OptoLink
import OptoLinkTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// docs/CONTRACT.md §2, "Retry matrix": one row per endpoint × failure kind.
@Suite(.timeLimit(.minutes(1)))
struct RetryMatrixTests {
    enum FailureKind: String, CaseIterable, Sendable {
        case connectionError = "connection error"
        case timeout
        case rateLimited = "429"
        case serverError = "5xx"
        case otherClientError = "other 4xx"

        var reply: StubTransport.Reply {
            switch self {
            case .connectionError: .error(URLError(.cannotConnectToHost))
            case .timeout: .hang
            case .rateLimited: .status(429, Fixture.rateLimited("17 seconds"))
            case .serverError: .status(503, Fixture.serverError)
            case .otherClientError: .status(404, Fixture.notFoundEnvelope)
            }
        }

        var errorLabel: String {
            switch self {
            case .connectionError: "connection_refused"
            case .timeout: "timed_out"
            case .rateLimited: "http_429"
            case .serverError: "http_503"
            case .otherClientError: "http_404"
            }
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var endpoint: OptoLinkEndpoint
        var failure: FailureKind
        var attempts: Int
        var sleeps: [OptoLinkDuration]
        var outcome: String

        var testDescription: String { "\(endpoint.rawValue) × \(failure.rawValue)" }
    }

    static let backoff: [OptoLinkDuration] = [.milliseconds(500), .seconds(1)]

    /// The expected matrix, written out from the contract (not derived from the SDK's policy).
    static let rows: [Row] = OptoLinkEndpoint.allCases.flatMap { endpoint in
        FailureKind.allCases.map { failure in
            let retried: Bool
            switch (endpoint.retryClass, failure) {
            case (.session, _), (_, .otherClientError): retried = false
            case (.telemetry, .serverError): retried = false
            default: retried = true
            }
            let sleeps = !retried ? [] : (failure == .rateLimited ? [.seconds(17), .seconds(17)] : backoff)
            let outcome: String
            switch endpoint {
            case .session: outcome = "logged"
            case .data: outcome = "raw"
            default: outcome = failure.errorLabel
            }
            return Row(
                endpoint: endpoint, failure: failure, attempts: retried ? 3 : 1, sleeps: sleeps, outcome: outcome)
        }
    }

    @Test("retry matrix row", arguments: rows)
    func matrixRow(_ row: Row) async throws {
        let transport = StubTransport()
        transport.enqueue(Array(repeating: row.failure.reply, count: 5), for: row.endpoint)
        let clock = RecordingClock(attemptDeadlines: row.failure == .timeout ? .expireEveryAttempt : .neverExpire)
        let logger = RecordingLogger()
        let store = Fixture.launchedStore()
        let sdk = OptoLink(
            config: Fixture.config(logger: logger),
            environment: Fixture.environment(transport, clock: clock, store: store))
        if row.endpoint != .session { await sdk.start() }
        await sdk.waitForBackgroundWork()
        let before = transport.requests(for: row.endpoint).count
        let deadlinesBefore = clock.deadlines.count

        let outcome = await Drive.call(row.endpoint, on: sdk)

        let attempts = transport.requests(for: row.endpoint).dropFirst(before)
        #expect(outcome == row.outcome)
        #expect(attempts.count == row.attempts)
        #expect(attempts.map(\.context.attempt) == Array(1...row.attempts))
        #expect(Set(attempts.map(\.context.callId)).count == 1, "one budget per public call")
        #expect(clock.sleeps == row.sleeps)
        #expect(
            Array(clock.deadlines.dropFirst(deadlinesBefore)) == Array(repeating: .seconds(10), count: row.attempts))
        if row.endpoint == .session {
            #expect(logger.entries.contains { $0.level == .warning && $0.message.contains("session") })
        }
    }

    @Test func backoffTableIsTheContractFormula() {
        let table = (0...6).map(OptoLinkBackoff.delay(retryIndex:))
        #expect(
            table == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5), .seconds(5)])
        #expect(OptoLinkBackoff.delay(retryIndex: -1) == .milliseconds(500))
        #expect(OptoLinkBackoff.delay(retryIndex: 1000) == .seconds(5))
    }

    @Test func rateLimitWithoutParsableWaitFallsBackToBackoff() async {
        let transport = StubTransport()
        transport.enqueue(
            Array(repeating: .status(429, #"{"statusCode":429,"message":"Slow down"}"#), count: 3), for: .events)
        let clock = RecordingClock()
        let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport, clock: clock))
        let outcome = await Drive.call(.events, on: sdk)
        #expect(outcome == "http_429")
        #expect(clock.sleeps == Self.backoff)
    }

    @Test func largerBudgetFollowsTheBackoffTable() async {
        let transport = StubTransport()
        transport.enqueue(Array(repeating: .status(500, Fixture.serverError), count: 10), for: .match)
        let clock = RecordingClock()
        let sdk = OptoLink(
            config: Fixture.config(maxRetries: 6), environment: Fixture.environment(transport, clock: clock))
        #expect(await Drive.call(.match, on: sdk) == "http_500")
        #expect(transport.requests(for: .match).count == 7)
        #expect(clock.sleeps == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5)])
    }

    @Test func recoversWhenALaterAttemptSucceeds() async throws {
        let transport = StubTransport()
        transport.enqueue(
            [
                .error(URLError(.networkConnectionLost)), .status(429, Fixture.rateLimited("1 second")),
                .status(200, #"{"ok":true}"#),
            ], for: .events)
        let clock = RecordingClock()
        let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport, clock: clock))
        try await sdk.trackEvent(name: "open")
        #expect(transport.requests(for: .events).count == 3)
        #expect(clock.sleeps == [.milliseconds(500), .seconds(1)])
    }

    @Test func zeroRetriesMeansOneAttempt() async {
        let transport = StubTransport()
        transport.enqueue(Array(repeating: .error(URLError(.timedOut)), count: 3), for: .identity)
        let clock = RecordingClock()
        let sdk = OptoLink(
            config: Fixture.config(maxRetries: 0), environment: Fixture.environment(transport, clock: clock))
        #expect(await Drive.call(.identity, on: sdk) == "timed_out")
        #expect(transport.requests(for: .identity).count == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test func nonURLErrorsBecomeUnknownConnectionErrors() async {
        let transport = StubTransport()
        transport.enqueue([.foreignError], for: .events)
        let sdk = OptoLink(config: Fixture.config(maxRetries: 0), environment: Fixture.environment(transport))
        #expect(await Drive.call(.events, on: sdk) == "unknown")
    }

    /// A policy that always retries at once: the loop still stops at `maxRetries + 1`.
    struct AlwaysRetry: OptoLinkRetryPolicy {
        var delay: OptoLinkDuration
        func decide(after failure: OptoLinkAttemptFailure, endpoint: OptoLinkEndpoint, retryIndex: Int)
            -> OptoLinkRetryDecision
        { .retry(after: delay) }
    }

    @Test(arguments: [OptoLinkEndpoint.events, .session, .match])
    func misbehavingPolicyIsHonouredWithinTheBudget(_ endpoint: OptoLinkEndpoint) async {
        let transport = StubTransport()
        transport.enqueue(Array(repeating: .status(429, Fixture.rateLimited("17 seconds")), count: 10), for: endpoint)
        let clock = RecordingClock()
        let sdk = OptoLink(
            config: Fixture.config(maxRetries: 3),
            environment: Fixture.environment(
                transport, clock: clock, store: Fixture.launchedStore(), retryPolicy: AlwaysRetry(delay: .seconds(1))))
        _ = await Drive.call(endpoint, on: sdk)
        #expect(transport.requests(for: endpoint).count == 4)
        #expect(clock.sleeps == Array(repeating: .seconds(1), count: 3), "Retry-After ignored, as the policy said")
    }

    @Test func negativePolicyDelayIsClampedToZero() async {
        let transport = StubTransport()
        transport.enqueue(Array(repeating: .error(URLError(.timedOut)), count: 3), for: .events)
        let clock = RecordingClock()
        let sdk = OptoLink(
            config: Fixture.config(maxRetries: 1),
            environment: Fixture.environment(transport, clock: clock, retryPolicy: AlwaysRetry(delay: .seconds(-3))))
        _ = await Drive.call(.events, on: sdk)
        #expect(clock.sleeps == [.zero])
    }

    /// A wait a clock cannot add to its `now` (it would trap in `ContinuousClock.sleep` and take
    /// the whole process down) is cut to ``OptoLinkBackoff/longestWait``: from a 429's `N`, at
    /// `Int.max` and just below it, and from a custom policy.
    @Test(arguments: [
        (Fixture.rateLimited("9223372036854775807 second(s)"), OptoLinkDuration?.none),
        (Fixture.rateLimited("9223372036854774807 seconds"), OptoLinkDuration?.none),
        (Fixture.serverError, OptoLinkDuration?.some(.seconds(Int64.max))),
    ])
    func hugeWaitIsCutToTheLongestWait(_ body: String, policyDelay: OptoLinkDuration?) async {
        let transport = StubTransport()
        transport.enqueue(Array(repeating: .status(policyDelay == nil ? 429 : 503, body), count: 3), for: .events)
        let clock = RecordingClock()
        let policy: any OptoLinkRetryPolicy =
            policyDelay.map { AlwaysRetry(delay: $0) } ?? OptoLinkContractRetryPolicy()
        let sdk = OptoLink(
            config: Fixture.config(maxRetries: 1),
            environment: Fixture.environment(transport, clock: clock, retryPolicy: policy))
        _ = await Drive.call(.events, on: sdk)
        #expect(clock.sleeps == [OptoLinkBackoff.longestWait])
        #expect(OptoLinkBackoff.longestWait == .seconds(31_536_000))
    }

    /// The same 429 on the real continuous clock: the call waits (no crash) until its task is
    /// cancelled, then ends as cancelled without a second attempt.
    @Test func hugeRateLimitWaitOnTheContinuousClockEndsWhenCancelled() async throws {
        let transport = StubTransport()
        transport.enqueue(
            Array(repeating: .status(429, Fixture.rateLimited("9223372036854775807 second(s)")), count: 3),
            for: .events)
        let sdk = OptoLink(
            config: Fixture.config(maxRetries: 2),
            environment: Fixture.environment(transport, clock: OptoLinkSystemClock()))
        let call = Task { await Drive.call(.events, on: sdk) }
        for _ in 0..<2_000 where transport.requests(for: .events).isEmpty {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(transport.requests(for: .events).count == 1)
        try await Task.sleep(for: .milliseconds(50))
        call.cancel()
        #expect(await call.value == "cancelled")
        #expect(transport.requests(for: .events).count == 1)
    }

    @Test func contractPolicyDecisions() {
        let policy = OptoLinkContractRetryPolicy()
        #expect(
            policy.decide(after: .status(429, retryAfterSeconds: 4), endpoint: .data, retryIndex: 1)
                == .retry(after: .seconds(4)))
        #expect(
            policy.decide(after: .status(502, retryAfterSeconds: nil), endpoint: .identityClear, retryIndex: 0) == .stop
        )
        #expect(
            policy.decide(after: .status(502, retryAfterSeconds: nil), endpoint: .data, retryIndex: 2)
                == .retry(after: .seconds(2)))
        #expect(policy.decide(after: .connection(.timedOut), endpoint: .session, retryIndex: 0) == .stop)
        #expect(policy.decide(after: .status(410, retryAfterSeconds: nil), endpoint: .match, retryIndex: 0) == .stop)
    }
}

/// The per-attempt deadline on a manual clock: no real time passes.
@Suite(.timeLimit(.minutes(1)))
struct DeadlineTests {
    @Test func hangingAttemptsTimeOutOnTheInjectedClock() async throws {
        let transport = StubTransport()
        transport.enqueue([.hang, .hang], for: .events)
        let clock = ManualClock()
        let sdk = OptoLink(
            config: Fixture.config(maxRetries: 1), environment: Fixture.environment(transport, clock: clock))
        let call = Task { await Drive.call(.events, on: sdk) }

        await clock.waitForSleepers(1)
        #expect(clock.pendingSleeps == [.seconds(10)], "the first attempt's deadline")
        clock.advance(by: .seconds(10))
        await clock.waitForSleepers(1)
        #expect(clock.pendingSleeps == [.milliseconds(500)], "back-off before the retry")
        clock.advance(by: .milliseconds(500))
        await clock.waitForSleepers(1)
        #expect(clock.pendingSleeps == [.seconds(10)], "the second attempt's deadline")
        clock.advance(by: .seconds(10))

        #expect(await call.value == "timed_out")
        #expect(transport.requests(for: .events).map(\.context.attempt) == [1, 2])
        #expect(clock.now.offset == .milliseconds(20_500))
    }

    @Test func fastResponsesCancelTheDeadline() async throws {
        let transport = StubTransport()
        let clock = ManualClock()
        let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport, clock: clock))
        try await sdk.trackEvent(name: "open")
        #expect(clock.sleeperCount == 0)
    }

    @Test func configuredTimeoutReachesContextAndDeadline() async throws {
        let transport = StubTransport()
        let clock = RecordingClock()
        var config = Fixture.config()
        config.timeout = 2.5
        let sdk = OptoLink(config: config, environment: Fixture.environment(transport, clock: clock))
        try await sdk.trackEvent(name: "open")
        #expect(transport.requests.first?.context.timeout == .milliseconds(2500))
        #expect(clock.deadlines == [.milliseconds(2500)])
    }
}

/// Odd timeouts never trap and disable the deadline.
@Suite(.timeLimit(.minutes(1)))
struct TimeoutConfigTests {
    @Test(arguments: [0, -1, Double.infinity, Double.nan])
    func nonPositiveOrNonFiniteTimeoutDisablesTheDeadline(_ seconds: Double) async throws {
        let transport = StubTransport()
        let clock = RecordingClock()
        var config = Fixture.config()
        config.timeout = seconds
        let sdk = OptoLink(config: config, environment: Fixture.environment(transport, clock: clock))
        try await sdk.trackEvent(name: "open")
        #expect(clock.deadlines.isEmpty)
        #expect(transport.requests.first?.context.timeout == .zero)
    }
}
