import Foundation
import OptoLink
import OptoLinkTestSupport
import Synchronization
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Cancellation reaches every piece of an instance's work: the deferred match inside
/// `start()`, a back-off sleep, a request in flight; `dispose()` ends all of it. Virtual time
/// (a manual clock that nobody advances), so a 20 s Retry-After would hang the test if it leaked.
@Suite(.timeLimit(.minutes(1)))
struct CancellationTests {
    /// Yields until the clock's only sleepers are `expected` (the per-attempt deadline
    /// sleeper of a finished attempt may linger for a moment).
    static func waitForSleeps(_ clock: ManualClock, _ expected: [Duration]) async {
        await clock.waitForSleepers(expected.count)
        while clock.pendingSleeps != expected { await Task.yield() }
    }

    static func cancelled(_ error: (any Error)?) -> Bool {
        (error as? OptoLinkConnectionError)?.underlying.code == .cancelled
    }

    @Test(
        "cancelling start() ends the deferred match's 429 back-off at once, with no retry and no session call",
        arguments: [20, 60])
    func cancellingStartEndsTheMatchBackOff(retryAfter: Int) async throws {
        let transport = StubTransport()
        transport.setDefault(.status(429, Fixture.rateLimited("\(retryAfter) seconds")), for: .match)
        let clock = ManualClock()
        let sdk = OptoLink(
            config: Fixture.config(maxRetries: 2), environment: Fixture.environment(transport, clock: clock))
        let start = Task { await sdk.start() }
        await Self.waitForSleeps(clock, [.seconds(retryAfter)])
        start.cancel()
        await start.value
        await sdk.waitForBackgroundWork()
        // The initialisation task itself has ended: a second start() returns without a request.
        await sdk.start()
        #expect(transport.requests.map(\.context.endpoint) == [.match])
        #expect(clock.sleeperCount == 0, "the back-off sleep is still pending")
        clock.advance(by: .seconds(retryAfter * 3))
        await sdk.waitForBackgroundWork()
        #expect(transport.requests.count == 1, "a retry or session call went out after the cancellation")
    }

    @Test("cancelling a caller ends its event call in a 429 back-off (N = 20) or in flight, without another attempt")
    func cancellingACallEndsItsBackOffAndItsRequest() async throws {
        for rateLimited in [true, false] {
            let reply: StubTransport.Reply =
                rateLimited ? .status(429, Fixture.rateLimited("20 seconds", path: "/sdk/events")) : .hang
            let transport = StubTransport()
            transport.setDefault(reply, for: .events)
            let clock = ManualClock()
            let sdk = OptoLink(
                config: Fixture.config(),
                environment: Fixture.environment(transport, clock: clock, store: Fixture.launchedStore()))
            await sdk.start()
            await sdk.waitForBackgroundWork()
            let call = Task { try await sdk.trackEvent(name: "e") }
            await transport.waitForRequests(2)  // the session call, then the event
            if rateLimited { await Self.waitForSleeps(clock, [.seconds(20)]) }
            call.cancel()
            let result = await call.result
            #expect(Self.cancelled(result.error), "\(result)")
            #expect(transport.requests(for: .events).count == 1)
            clock.advance(by: .seconds(60))
            await Task.yield()
            #expect(transport.requests(for: .events).count == 1)
            sdk.dispose()
        }
    }

    @Test(
        "dispose() ends every request of an instance: calls in flight, in back-off, the session call; later calls send nothing"
    )
    func disposeEndsEveryRequest() async throws {
        let transport = StubTransport()
        transport.setDefault(.hang, for: .session)
        transport.setDefault(.hang, for: .events)
        transport.setDefault(.status(429, Fixture.rateLimited("60 seconds", path: "/sdk/identity")), for: .identity)
        let clock = ManualClock()
        let sdk = OptoLink(
            config: Fixture.config(),
            environment: Fixture.environment(transport, clock: clock, store: Fixture.launchedStore()))
        await sdk.start()
        let event = Task { try await sdk.trackEvent(name: "e") }
        let identity = Task { try await sdk.setIdentity(externalId: "u1") }
        await transport.waitForRequests(3)
        await Self.waitForSleeps(clock, [.seconds(10), .seconds(10), .seconds(60)])  // two deadlines, one back-off
        sdk.dispose()
        #expect(Self.cancelled(await event.result.error))
        #expect(Self.cancelled(await identity.result.error))
        await sdk.waitForBackgroundWork()
        #expect(clock.sleeperCount == 0)
        await #expect(throws: OptoLinkConnectionError.self) { try await sdk.clearIdentity() }
        #expect(
            transport.requests.map(\.context.endpoint).sorted { $0.rawValue < $1.rawValue } == [
                .events, .identity, .session,
            ])
    }

    @Test("16 concurrent setIdentity calls (and 4 events) made while start() runs wait for it, and all succeed")
    func telemetryWaitsForARunningStart() async throws {
        let matched = Mutex(false)
        let gate = Gate()
        let transport = StubTransport()
        transport.enqueue([.gated(gate, then: .status(201, Fixture.missBody))], for: .match)
        // The backend knows a deviceId only once its /match has been answered.
        let unknownOrKnown: StubTransport.Reply = .compute { request, context in
            guard matched.withLock({ $0 }) else {
                return OptoLinkHTTPResponse(
                    status: 404,
                    body: Data(#"{"statusCode":404,"message":"Unknown deviceId x — call /sdk/session first"}"#.utf8))
            }
            return StubTransport.contractDefault(for: context.endpoint).response ?? OptoLinkHTTPResponse(status: 500)
        }
        transport.setDefault(unknownOrKnown, for: .identity)
        transport.setDefault(unknownOrKnown, for: .events)
        let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport))
        let start = Task { await sdk.start() }
        await transport.waitForRequests(1)
        let failures = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<20 {
                group.addTask {
                    do {
                        if index < 16 {
                            try await sdk.setIdentity(externalId: "user-\(index)")
                        } else {
                            try await sdk.trackEvent(name: "e\(index)")
                        }
                        return false
                    } catch {
                        return true
                    }
                }
            }
            // Give the calls every chance to overtake the match, then release it.
            for _ in 0..<50 { await Task.yield() }
            #expect(transport.requests.count == 1, "a telemetry call went out before start() finished")
            matched.withLock { $0 = true }
            gate.open()
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        await start.value
        #expect(failures == 0)
        #expect(transport.requests(for: .identity).count == 16)
        #expect(transport.requests(for: .events).count == 4)
        sdk.dispose()
    }

    @Test("a cancelled start() caller returns at once while another caller keeps the initialisation running")
    func oneCancelledWaiterDoesNotCancelTheOthers() async throws {
        let gate = Gate()
        let transport = StubTransport()
        transport.enqueue([.gated(gate, then: .status(201, Fixture.missBody))], for: .match)
        let sdk = OptoLink(config: Fixture.config(), environment: Fixture.environment(transport))
        let first = Task { await sdk.start() }
        await transport.waitForRequests(1)
        let second = Task { await sdk.start() }
        second.cancel()
        await second.value
        gate.open()
        await first.value
        await sdk.waitForBackgroundWork()
        #expect(transport.requests.map(\.context.endpoint) == [.match, .session])
        sdk.dispose()
    }
}

extension Result {
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension StubTransport.Reply {
    var response: OptoLinkHTTPResponse? {
        if case .response(let response) = self { return response }
        return nil
    }
}
