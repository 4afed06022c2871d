import Foundation
import OptoLink

/// A clock that records every sleep it is asked for and returns at once, advancing its
/// virtual `now` by the requested duration. Tests read ``sleeps`` to assert exact back-off
/// and Retry-After delays without waiting.
///
/// The SDK's per-attempt deadlines are not ordinary sleeps here: the clock adopts
/// `OptoLinkDeadlineClock`, records them in ``deadlines`` and, by default, never fires them
/// (the attempt always finishes first). With `deadlinesFire: true` every deadline fires at
/// once: use it only with attempts that hang (`StubTransport.Reply.hang`), since a fast
/// reply would race the deadline; use ``ManualClock`` to time out some attempts and not others.
public final class RecordingClock: Clock, OptoLinkDeadlineClock, Sendable {
    public typealias Instant = VirtualInstant

    private struct State: Sendable {
        var now = VirtualInstant()
        var sleeps: [Duration] = []
        var deadlines: [Duration] = []
    }

    private let state = TestLock(State())
    private let deadlinesFire: Bool

    public init(deadlinesFire: Bool = false) {
        self.deadlinesFire = deadlinesFire
    }

    public var now: VirtualInstant { state.withLock { $0.now } }

    public var minimumResolution: Duration { .zero }

    /// Every requested sleep (back-off, Retry-After), in order.
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// Every per-attempt deadline the SDK armed, in order.
    public var deadlines: [Duration] { state.withLock { $0.deadlines } }

    public func sleep(until deadline: VirtualInstant, tolerance: Duration? = nil) async throws {
        state.withLock { state in
            state.sleeps.append(state.now.duration(to: deadline))
            if deadline > state.now { state.now = deadline }
        }
        try Task.checkCancellation()
    }

    public func sleepUntilDeadline(_ timeout: Duration) async throws {
        state.withLock { $0.deadlines.append(timeout) }
        if deadlinesFire { return }
        await suspendUntilCancelled()
        throw CancellationError()
    }
}
