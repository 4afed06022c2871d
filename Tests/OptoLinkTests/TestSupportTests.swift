import Foundation
import OptoLink
import OptoLinkTestSupport
import Testing

/// The public test doubles, used the way an app developer would: through `OptoLink(config:environment:)`
/// and `OptoLinkEnvironment.inMemory(…)`, in virtual time.
@Suite(.timeLimit(.minutes(1)))
struct TestSupportTests {
    // MARK: - A reply after a delay, on the injected clock

    /// A reply after 3 s beats the 10 s per-attempt deadline; one after 12 s loses to it.
    @Test func aDelayedReplyRacesTheDeadlineInVirtualTime() async throws {
        let transport = StubTransport()
        let clock = ManualClock()
        transport.enqueue([.after(.seconds(3), on: clock, .status(200, #"{"ok":true}"#))], for: .events)
        transport.enqueue([.after(.seconds(12), on: clock, .status(200, #"{"ok":true}"#))], for: .events)
        let sdk = OptoLink(
            config: Fixture.config(maxRetries: 0),
            environment: .inMemory(transport: transport, deviceInfo: Fixture.deviceInfo, clock: clock))

        let fast = Task { await Drive.call(.events, on: sdk) }
        await clock.waitForSleepers(2)  // the reply's 3 s and the attempt's 10 s deadline
        #expect(clock.pendingSleeps == [.seconds(3), .seconds(10)])
        clock.advance(by: .seconds(3))
        #expect(await fast.value == "ok")

        let slow = Task { await Drive.call(.events, on: sdk) }
        await clock.waitForSleepers(2)
        #expect(clock.pendingSleeps == [.seconds(10), .seconds(12)])
        clock.advance(by: .seconds(10))
        #expect(await slow.value == "timed_out")
        #expect(clock.sleeperCount == 0, "the losing reply's sleep was cancelled, not left behind")
    }

    /// The delayed reply is itself a reply of any kind: a 503 after 1 s on `/match` (repeat-safe,
    /// so retried), then the back-off, found with `waitForSleep` while the deadline may still linger.
    @Test func aDelayedErrorIsRetriedLikeAnImmediateOne() async throws {
        let transport = StubTransport()
        let clock = ManualClock()
        transport.enqueue([.after(.seconds(1), on: clock, .status(503))], for: .match)
        let sdk = OptoLink(
            config: Fixture.config(), environment: .inMemory(transport: transport, clock: clock))
        let call = Task { await Drive.call(.match, on: sdk) }
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(1))
        await clock.waitForSleep(.milliseconds(500))
        clock.advance(by: .milliseconds(500))
        #expect(await call.value == "nil")  // the retry got the default miss
        #expect(transport.requests(for: .match).map(\.context.attempt) == [1, 2])
    }

    // MARK: - Waiting for N requests at one endpoint

    @Test func waitForRequestsToAnEndpointCountsOnlyThatEndpoint() async throws {
        let transport = StubTransport()
        let gate = Gate()
        transport.setDefault(.gated(gate, then: .status(200, #"{"ok":true}"#)), for: .events)
        let sdk = OptoLink(
            config: Fixture.config(), environment: .inMemory(transport: transport, clock: RecordingClock()))
        try await sdk.setIdentity(externalId: "u-1")  // one request elsewhere first
        let calls = (0..<3).map { i in Task { try await sdk.trackEvent(name: "e\(i)") } }
        await transport.waitForRequests(3, to: .events)
        #expect(transport.requests(for: .events).count == 3)
        #expect(transport.requests.count == 4)
        await transport.waitForRequests(1, to: .identity)  // already reached: returns at once
        gate.open()
        for call in calls { try await call.value }
    }

    /// Retries count as requests: the wait returns once the retry has arrived too.
    @Test func waitForRequestsCountsRetries() async throws {
        let transport = StubTransport()
        let clock = ManualClock()
        transport.enqueue([.error(URLError(.networkConnectionLost))], for: .events)
        let sdk = OptoLink(config: Fixture.config(), environment: .inMemory(transport: transport, clock: clock))
        let call = Task { try await sdk.trackEvent(name: "e") }
        let waited = Task { await transport.waitForRequests(2, to: .events) }
        await clock.waitForSleep(.milliseconds(500))  // the back-off, not the first attempt's deadline
        #expect(transport.requests(for: .events).count == 1)
        clock.advance(by: .milliseconds(500))
        await waited.value
        #expect(transport.requests(for: .events).map(\.context.attempt) == [1, 2])
        try await call.value
    }

    /// A wait that can never be met ends when its task is cancelled (a time limit can stop it).
    @Test func waitsEndWhenTheirTaskIsCancelled() async {
        let transport = StubTransport()
        let clock = ManualClock()
        let waits = [
            Task { await transport.waitForRequests(1, to: .events) },
            Task { await transport.waitForRequests(5) },
            Task { await clock.waitForSleepers(3) },
            Task { await clock.waitForSleep(.seconds(1)) },
        ]
        for wait in waits { wait.cancel() }
        for wait in waits { await wait.value }
        #expect(transport.requests.isEmpty)
    }

    // MARK: - A spy pasteboard in the inMemory environment

    @Test func theSpyPasteboardSeesOneReadAndAClearOnAHit() async throws {
        let transport = StubTransport()
        transport.enqueue([.status(201, Fixture.hitLowercaseBody)], for: .match)
        let pasteboard = SpyPasteboard("opl_tok123")
        let sdk = OptoLink(
            config: Fixture.config(), environment: .inMemory(transport: transport, pasteboard: pasteboard))
        await sdk.start()
        #expect(pasteboard.accesses == [.read("opl_tok123"), .clear])
        #expect(pasteboard.content == nil)
    }

    @Test(arguments: [
        (Fixture.missBody, true, [SpyPasteboard.Access.read("opl_tok123")]),
        (Fixture.hitLowercaseBody, false, []),
    ])
    func theSpyPasteboardIsKeptOnAMissAndUntouchedWhenDisabled(
        body: String, clipboardEnabled: Bool, expected: [SpyPasteboard.Access]
    ) async throws {
        let transport = StubTransport()
        transport.enqueue([.status(201, body)], for: .match)
        let pasteboard = SpyPasteboard("opl_tok123")
        let sdk = OptoLink(
            config: Fixture.config(clipboardEnabled: clipboardEnabled),
            environment: .inMemory(transport: transport, pasteboard: pasteboard))
        await sdk.start()
        #expect(pasteboard.accesses == expected)
        #expect(pasteboard.content == "opl_tok123")
        #expect(pasteboard.clearCount == 0)
    }

    // MARK: - RecordingClock says what deadlines do

    @Test func recordingClockDeadlinesSayWhatTheyDo() async throws {
        #expect(RecordingClock().attemptDeadlines == .neverExpire)
        let transport = StubTransport()
        transport.setDefault(.hang, for: .events)
        let clock = RecordingClock(attemptDeadlines: .expireEveryAttempt)
        let sdk = OptoLink(
            config: Fixture.config(maxRetries: 1), environment: .inMemory(transport: transport, clock: clock))
        #expect(await Drive.call(.events, on: sdk) == "timed_out")
        #expect(clock.deadlines == [.seconds(10), .seconds(10)])
        #expect(clock.sleeps == [.milliseconds(500)])
    }

    // MARK: - TestLock for hand-written doubles

    @Test func testLockSerializesConcurrentWriters() async {
        let counter = TestLock(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<100 { group.addTask { counter.withLock { $0 += 1 } } }
        }
        #expect(counter.withLock { $0 } == 100)
    }
}
