import Dispatch
import Foundation
import OptoLink
import OptoLinkTestSupport
import Synchronization
import Testing

/// An instance's own tasks (its initialisation, public calls in tasks of their own, back-off
/// sleeps) prefer the task executor the transport declares (``OptoLinkTransportCapabilities``):
/// the soak driver keeps a launch's work on the loop thread that runs its device.
@Suite(.timeLimit(.minutes(1)))
struct TaskExecutorPreferenceTests {
    /// Runs every job on one serial queue, marked so code can tell it runs there.
    final class QueueExecutor: TaskExecutor {
        static let marker = DispatchSpecificKey<Bool>()
        let queue = DispatchQueue(label: "preferred")
        let jobs = Atomic<Int>(0)

        init() { queue.setSpecific(key: Self.marker, value: true) }

        func enqueue(_ job: consuming ExecutorJob) {
            jobs.add(1, ordering: .relaxed)
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }

        static var isCurrent: Bool { DispatchQueue.getSpecific(key: marker) == true }
    }

    /// Notes, per attempt, whether it ran on the preferred executor's queue.
    struct WhereMiddleware: OptoLinkMiddleware {
        let seen = TestLock<[OptoLinkEndpoint: [Bool]]>([:])

        func intercept(
            _ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext,
            next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
        ) async throws -> OptoLinkHTTPResponse {
            let onQueue = QueueExecutor.isCurrent
            seen.withLock { $0[context.endpoint, default: []].append(onQueue) }
            return try await next(request, context)
        }
    }

    /// The stub transport, declaring `executor` and nothing else.
    struct Declaring: OptoLinkTransport {
        let base: StubTransport
        let executor: QueueExecutor?

        var capabilities: OptoLinkTransportCapabilities {
            var capabilities = OptoLinkTransportCapabilities.none
            capabilities.taskExecutor = executor
            return capabilities
        }

        func send(_ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext) async throws
            -> OptoLinkHTTPResponse
        {
            try await base.send(request, context: context)
        }
    }

    private func launch(preferring executor: QueueExecutor?) async throws -> [OptoLinkEndpoint: [Bool]] {
        let transport = StubTransport()
        transport.enqueue([.status(201, Fixture.missBody)], for: .match)
        transport.setDefault(.status(200, "{}"), for: .events)
        let spy = WhereMiddleware()
        var environment = Fixture.environment(transport, clock: OptoLinkSystemClock(), middlewares: [spy])
        environment.transport = Declaring(base: transport, executor: executor)
        let sdk = OptoLink(config: Fixture.config(), environment: environment)
        await sdk.start()  // the first-launch /match runs in the initialisation's task
        try await sdk.trackEvent(name: "e", properties: [:])  // a public call in a task of its own
        sdk.dispose()
        return spy.seen.withLock { $0 }
    }

    @Test func theInstancesTasksRunOnThePreferredExecutor() async throws {
        let executor = QueueExecutor()
        let seen = try await launch(preferring: executor)
        #expect(seen[.match] == [true])
        #expect(seen[.events] == [true])
        #expect(executor.jobs.load(ordering: .relaxed) > 0)
    }

    @Test func withoutOneTheyRunOnTheGlobalPool() async throws {
        let seen = try await launch(preferring: nil)
        #expect(seen[.match] == [false])
        #expect(seen[.events] == [false])
    }
}
