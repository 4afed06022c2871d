import Foundation

/// The SDK's injected time source (docs/CONTRACT.md §3, "Platform seams"): a monotonic now,
/// a cancellable sleep until a deadline, and a cancellable one-shot timer.
///
/// Every back-off sleep, `Retry-After` wait and per-attempt deadline of an instance runs on its
/// ``OptoLinkEnvironment/clock``. The SDK defines this protocol instead of using Swift's `Clock`
/// because `Clock` and `Duration` need iOS 16, and the SDK's floor is iOS 15. Apps get
/// ``OptoLinkSystemClock``; tests inject a virtual clock (OptoLinkTestSupport's `ManualClock` and
/// `RecordingClock`). The SDK's deadline and back-off code is the same for every conformance:
/// it calls these three requirements and never checks which clock it holds.
///
/// The requirements' names differ from `Clock`'s (`instant`, not `now`), so one type can be both
/// a Swift `Clock` and an ``OptoLinkClock``.
public protocol OptoLinkClock: Sendable {
    /// The current instant on this clock's monotonic timeline.
    var instant: OptoLinkInstant { get }

    /// Suspends until `deadline` has been reached (at once when it has already passed).
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled first.
    func sleep(until deadline: OptoLinkInstant) async throws

    /// Arms a one-shot timer: `expire` runs once `deadline` has been reached, unless the returned
    /// timer is cancelled first. The SDK arms one per attempt as its per-attempt deadline
    /// (docs/CONTRACT.md §2, "Timeout per attempt") and cancels it when the attempt ends.
    ///
    /// The default implementation sleeps on ``sleep(until:)`` in a task of its own; a clock with a
    /// cheaper timer (``OptoLinkSystemClock``: a dispatch timer) or with deadlines of its own
    /// (a recording test clock) implements it.
    func startTimer(until deadline: OptoLinkInstant, expire: @escaping @Sendable () -> Void) -> OptoLinkTimer
}

extension OptoLinkClock {
    /// Sleeps on ``sleep(until:)`` in a task of its own, then runs `expire`; cancelling the timer
    /// cancels that task (and `expire` does not run).
    public func startTimer(until deadline: OptoLinkInstant, expire: @escaping @Sendable () -> Void) -> OptoLinkTimer {
        let sleeper = Task {
            do {
                try await sleep(until: deadline)
            } catch {
                return
            }
            expire()
        }
        return OptoLinkTimer { sleeper.cancel() }
    }

    /// Sleeps for `duration` from now (``sleep(until:)`` at `instant` + `duration`).
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled first.
    public func sleep(for duration: OptoLinkDuration) async throws {
        try await sleep(until: instant.advanced(by: duration))
    }
}

/// A one-shot timer armed by ``OptoLinkClock/startTimer(until:expire:)``.
public struct OptoLinkTimer: Sendable {
    private let onCancel: @Sendable () -> Void

    /// A timer that `cancel` disarms.
    ///
    /// - Parameter cancel: disarms the timer so that its `expire` does not run; called at most
    ///   once per ``cancel()`` and harmless after the timer fired.
    public init(cancel: @escaping @Sendable () -> Void) {
        onCancel = cancel
    }

    /// Disarms the timer: its `expire` does not run if it has not run yet.
    public func cancel() {
        onCancel()
    }
}
