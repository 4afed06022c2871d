import Foundation
import OptoLink
import OptoLinkTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// docs/CONTRACT.md §2, timeout per attempt: a transport that declares
/// ``OptoLinkTransportCapabilities/enforcesDeadline`` is called in the attempt's own task, without
/// the race's extra task and timer, on any clock; every other transport keeps the race, on any clock.
@Suite(.timeLimit(.minutes(1)))
struct SelfTimedTransportTests {
    /// Answers 200 and notes the task it ran in and the context it was given.
    final class TaskNoting: OptoLinkTransport, Sendable {
        let seen = TestLock<[(task: Int?, timeout: OptoLinkDuration)]>([])

        func send(_ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext) async throws
            -> OptoLinkHTTPResponse
        {
            let task = withUnsafeCurrentTask { $0?.hashValue }
            seen.withLock { $0.append((task, context.attemptTimeout)) }
            return OptoLinkHTTPResponse(status: 200)
        }
    }

    /// The same, declaring that it runs the deadline itself.
    struct SelfTimed: OptoLinkTransport {
        let inner = TaskNoting()
        var capabilities: OptoLinkTransportCapabilities { OptoLinkTransportCapabilities(enforcesDeadline: true) }
        func send(_ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext) async throws
            -> OptoLinkHTTPResponse
        {
            try await inner.send(request, context: context)
        }
    }

    static let request = OptoLinkHTTPRequest(method: "POST", url: URL(string: "http://127.0.0.1:9/sdk/events")!)
    static let context = OptoLinkRequestContext(endpoint: .events, callId: 1, attempt: 1, timeout: .seconds(30))

    /// The hash of the task the transport ran in, and of the calling task.
    static func tasks(_ transport: any OptoLinkTransport, noting: TaskNoting, clock: any OptoLinkClock) async throws
        -> (transport: Int?, caller: Int?)
    {
        let send = OptoLinkRetryLoop.chain(
            [], transport: transport, capabilities: transport.capabilities, deadline: .seconds(30), clock: clock)
        let caller = withUnsafeCurrentTask { $0?.hashValue }
        let response = try await send(request, context)
        #expect(response.status == 200)
        return (noting.seen.withLock { $0.last?.task }, caller)
    }

    @Test(arguments: [false, true])
    func aSelfTimedTransportRunsInTheAttemptsOwnTaskOnAnyClock(virtual: Bool) async throws {
        let transport = SelfTimed()
        let clock: any OptoLinkClock = virtual ? ManualClock() : OptoLinkSystemClock()
        let (ran, caller) = try await Self.tasks(transport, noting: transport.inner, clock: clock)
        #expect(caller != nil)
        #expect(ran == caller)
        #expect(transport.inner.seen.withLock { $0.map(\.timeout) } == [.seconds(30)])
    }

    @Test(arguments: [false, true])
    func anyOtherTransportIsRacedInATaskOfItsOwnOnAnyClock(virtual: Bool) async throws {
        let transport = TaskNoting()
        let clock: any OptoLinkClock = virtual ? ManualClock() : OptoLinkSystemClock()
        let (ran, caller) = try await Self.tasks(transport, noting: transport, clock: clock)
        #expect(ran != nil)
        #expect(ran != caller)
    }

    /// The race that apps run (the system clock's path) times a hanging transport out on a virtual
    /// clock too: the attempt ends as `.timedOut` when virtual time passes its deadline.
    @Test func theRaceTimesOutAHangingTransportOnAVirtualClock() async throws {
        struct Hangs: OptoLinkTransport {
            func send(_ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext) async throws
                -> OptoLinkHTTPResponse
            {
                try await Task.sleep(for: .seconds(600))
                return OptoLinkHTTPResponse(status: 200)
            }
        }
        let clock = ManualClock()
        let send = OptoLinkRetryLoop.chain(
            [], transport: Hangs(), capabilities: .none, deadline: .seconds(5), clock: clock)
        let attempt = Task { try await send(Self.request, Self.context) }
        await clock.waitForSleep(.seconds(5))
        clock.advance(by: .seconds(5))
        await #expect(throws: URLError(.timedOut)) { try await attempt.value }
    }
}
