import Foundation
import OptoLink

/// A clock that records every sleep it is asked for and returns at once, advancing its
/// virtual `now` by the requested duration. Tests read ``sleeps`` to assert exact back-off
/// and Retry-After delays without waiting.
///
/// The SDK's per-attempt deadlines are not ordinary sleeps here: the clock arms them as its own
/// timers (``startTimer(until:expire:)``) and records them in ``deadlines``. What they do is said once, at
/// creation, by ``AttemptDeadlines``: ``AttemptDeadlines/neverExpire`` (the default; every
/// attempt finishes first) or ``AttemptDeadlines/expireEveryAttempt`` (every attempt times out).
/// To time out some attempts and not others, use ``ManualClock`` with
/// ``StubTransport/Reply/after(_:on:_:)`` instead.
///
/// Sleeps return at once and advance the virtual `now`; they are recorded, so a test can assert
/// the exact back-off and Retry-After delays (docs/CONTRACT.md §2, "Retry matrix").
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
public final class RecordingClock: Clock, OptoLinkClock, Sendable {
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
        var sleeps: [OptoLinkDuration] = []
        var deadlines: [OptoLinkDuration] = []
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
    public var sleeps: [OptoLinkDuration] { state.withLock { $0.sleeps } }

    /// Every per-attempt deadline the SDK armed, in order.
    public var deadlines: [OptoLinkDuration] { state.withLock { $0.deadlines } }

    public func sleep(until deadline: VirtualInstant, tolerance: Duration? = nil) async throws {
        state.withLock { state in
            state.sleeps.append(OptoLinkDuration(state.now.duration(to: deadline)))
            if deadline > state.now { state.now = deadline }
        }
        try Task.checkCancellation()
    }

    /// The virtual now as the SDK's instant.
    public var instant: OptoLinkInstant { now.optoLinkInstant }

    /// Records the sleep and returns at once, advancing the virtual now to `deadline`.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled.
    public func sleep(until deadline: OptoLinkInstant) async throws {
        try await sleep(until: VirtualInstant(deadline), tolerance: nil)
    }

    /// Records the deadline (its time from now), then expires at once or never, per
    /// ``attemptDeadlines``.
    public func startTimer(until deadline: OptoLinkInstant, expire: @escaping @Sendable () -> Void) -> OptoLinkTimer {
        state.withLock { $0.deadlines.append(OptoLinkDuration($0.now.duration(to: VirtualInstant(deadline)))) }
        if attemptDeadlines == .expireEveryAttempt { expire() }
        return OptoLinkTimer {}
    }
}
