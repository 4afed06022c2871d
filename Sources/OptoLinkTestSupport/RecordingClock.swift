import Foundation
import OptoLink

/// A clock that records every sleep it is asked for and returns at once, advancing its
/// virtual `now` by the requested duration. Tests read ``sleeps`` to assert exact back-off
/// and Retry-After delays without waiting.
///
/// The SDK's per-attempt deadlines are not ordinary sleeps here: the clock adopts
/// `OptoLinkDeadlineClock` and records them in ``deadlines``. What they do is said once, at
/// creation, by ``AttemptDeadlines``: ``AttemptDeadlines/neverExpire`` (the default; every
/// attempt finishes first) or ``AttemptDeadlines/expireEveryAttempt`` (every attempt times out).
/// To time out some attempts and not others, use ``ManualClock`` with
/// ``StubTransport/Reply/after(_:on:_:)`` instead.
///
/// Sleeps return at once and advance the virtual `now`; they are recorded, so a test can assert
/// the exact back-off and Retry-After delays (docs/CONTRACT.md §2, "Retry matrix").
public final class RecordingClock: Clock, OptoLinkDeadlineClock, Sendable {
    public typealias Instant = VirtualInstant

    /// What the SDK's per-attempt deadline (docs/CONTRACT.md §2, "Timeout per attempt") does on
    /// a ``RecordingClock``.
    public enum AttemptDeadlines: Sendable, Equatable {
        /// Never fires: the attempt always wins the race, whatever its reply. The default.
        case neverExpire
        /// Fires at once for every attempt: every call sees `OptoLinkConnectionError.timeout`
        /// (and retries per the matrix). Pair it only with replies that never come
        /// (`StubTransport.Reply.hang`); a reply that is ready at once races the deadline, and
        /// either may win.
        case expireEveryAttempt
    }

    private struct State: Sendable {
        var now = VirtualInstant()
        var sleeps: [Duration] = []
        var deadlines: [Duration] = []
    }

    private let state = TestLock(State())

    /// What the SDK's per-attempt deadlines do on this clock.
    public let attemptDeadlines: AttemptDeadlines

    /// A clock at virtual time zero whose per-attempt deadlines behave as `attemptDeadlines` says.
    public init(attemptDeadlines: AttemptDeadlines = .neverExpire) {
        self.attemptDeadlines = attemptDeadlines
    }

    /// The earlier spelling: `true` meant ``AttemptDeadlines/expireEveryAttempt``.
    @available(*, deprecated, message: "say what deadlines do: RecordingClock(attemptDeadlines: .expireEveryAttempt)")
    public convenience init(deadlinesFire: Bool) {
        self.init(attemptDeadlines: deadlinesFire ? .expireEveryAttempt : .neverExpire)
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

    /// Records `timeout`, then expires at once or waits for cancellation, per ``attemptDeadlines``.
    ///
    /// - Throws: `CancellationError` when the attempt finished first (``AttemptDeadlines/neverExpire``).
    public func sleepUntilDeadline(_ timeout: Duration) async throws {
        state.withLock { $0.deadlines.append(timeout) }
        if attemptDeadlines == .expireEveryAttempt { return }
        await suspendUntilCancelled()
        throw CancellationError()
    }
}
