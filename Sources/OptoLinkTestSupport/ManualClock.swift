import Foundation

/// A clock that only moves when the test says so: sleepers resume when ``advance(by:)``
/// (or ``advance(to:)``) passes their deadline, in deadline order.
///
/// Sleeps honour cancellation (they throw `CancellationError`), so the SDK's deadline
/// race can cancel its timer. ``waitForSleepers(_:)`` and ``waitForSleep(_:)`` let a test wait,
/// without real sleeps, until the code under test is parked on the clock; both return early
/// when the waiting task is cancelled (e.g. by a test's time limit).
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
public final class ManualClock: Clock, Sendable {
    public typealias Instant = VirtualInstant

    private struct Sleeper: Sendable {
        let deadline: VirtualInstant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State: WaitableState {
        var now = VirtualInstant()
        var sleepers: [UInt64: Sleeper] = [:]
        var nextId: UInt64 = 0
        var waiters = ConditionWaiters<State>()

        var pendingSleeps: [Duration] { sleepers.values.map { now.duration(to: $0.deadline) }.sorted() }
    }

    private let state = TestLock(State())

    public init() {}

    public var now: VirtualInstant { state.withLock { $0.now } }

    public var minimumResolution: Duration { .zero }

    /// How many tasks are currently sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The deadlines of the current sleepers, as offsets from now, ascending.
    public var pendingSleeps: [Duration] {
        state.withLock { $0.pendingSleeps }
    }

    public func sleep(until deadline: VirtualInstant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            state.nextId += 1
            return state.nextId
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case wait, resume, cancel }
                let (outcome, ready) = state.withLock { state -> (Outcome, [CheckedContinuation<Void, Never>]) in
                    // Checked under the lock: a cancellation after this point finds the sleeper registered.
                    if Task.isCancelled { return (.cancel, []) }
                    if deadline <= state.now { return (.resume, []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return (.wait, state.takeSatisfiedWaiters())
                }
                for waiter in ready { waiter.resume() }
                switch outcome {
                case .wait: break
                case .resume: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let (sleeper, ready) = state.withLock { ($0.sleepers.removeValue(forKey: id), $0.takeSatisfiedWaiters()) }
            sleeper?.continuation.resume(throwing: CancellationError())
            for waiter in ready { waiter.resume() }
        }
    }

    /// Moves time forward by `duration` and resumes every sleeper whose deadline passed.
    public func advance(by duration: Duration) {
        let target = state.withLock { $0.now.advanced(by: duration) }
        advance(to: target)
    }

    /// Moves time to `instant` (never backwards) and resumes every sleeper due by then.
    public func advance(to instant: VirtualInstant) {
        let (due, ready) = state.withLock { state -> ([Sleeper], [CheckedContinuation<Void, Never>]) in
            if instant > state.now { state.now = instant }
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return (due.values.sorted { $0.deadline < $1.deadline }, state.takeSatisfiedWaiters())
        }
        for sleeper in due { sleeper.continuation.resume() }
        for waiter in ready { waiter.resume() }
    }

    /// Returns once at least `count` tasks are sleeping on this clock (at once if they already
    /// are, or when the waiting task is cancelled).
    public func waitForSleepers(_ count: Int = 1) async {
        await state.wait { $0.sleepers.count >= count }
    }

    /// Returns once some task sleeps with exactly `remaining` left before its deadline (at once
    /// if one already does, or when the waiting task is cancelled).
    ///
    /// Tells apart sleeps that overlap: after a reply beats the SDK's 10 s per-attempt deadline,
    /// that deadline's sleep may still be pending for a moment while the back-off (0.5 s) starts;
    /// `waitForSleep(.milliseconds(500))` waits for the back-off itself (docs/CONTRACT.md §2,
    /// "Retry matrix").
    public func waitForSleep(_ remaining: Duration) async {
        await state.wait { $0.pendingSleeps.contains(remaining) }
    }
}
