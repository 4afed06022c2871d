import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The per-attempt deadline (docs/CONTRACT.md §2, timeout per attempt), enforced by the SDK on the
/// injected clock rather than by URLSession's whole-second idle timer.
enum OptoLinkAttemptDeadline {
    /// Runs `operation` against a timer of `timeout` on `clock`; whichever finishes first
    /// wins and the other is cancelled.
    ///
    /// - Throws: `URLError(.timedOut)` when the timer wins; otherwise what `operation` throws.
    ///   Returns only once the loser has ended, so an operation must honour cancellation.
    static func race(
        _ timeout: Duration, on clock: any Clock<Duration>,
        _ operation: @escaping @Sendable () async throws -> OptoLinkHTTPResponse
    ) async throws -> OptoLinkHTTPResponse {
        if clock is ContinuousClock { return try await raceOnDispatchTimer(timeout, operation) }
        return try await withThrowingTaskGroup(of: OptoLinkHTTPResponse?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await sleep(timeout, on: clock)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let response = first else {
                throw URLError(.timedOut)
            }
            return response
        }
    }

    /// The same race on the real clock, with a dispatch timer instead of a sleeping child
    /// task: one task per attempt instead of a task group with two, and no sleep to wake and
    /// cancel when the attempt ends first (which is every attempt that gets a response).
    ///
    /// The timer cancels the attempt's task when it fires; the race then reports
    /// `URLError(.timedOut)` once the attempt has ended, unless the attempt still returned a
    /// response. Cancelling the caller cancels the attempt. The timer counts
    /// `DispatchTime` (monotonic), which `ContinuousClock` equals while the device is awake.
    ///
    /// - Throws: `URLError(.timedOut)` when the timer fired; otherwise what `operation` throws.
    private static func raceOnDispatchTimer(
        _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> OptoLinkHTTPResponse
    ) async throws -> OptoLinkHTTPResponse {
        let attempt = Task { try await operation() }
        let fired = LockedBox(false)
        // A timer source rather than `asyncAfter`: cancelling it removes it (and the attempt
        // it holds, with its response) at once, where a cancelled `asyncAfter` item stays
        // queued until its deadline.
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.setEventHandler {
            fired.withLock { $0 = true }
            attempt.cancel()
        }
        let (seconds, attoseconds) = timeout.components
        // The retry loop caps deadlines at one year, far below `Int.max` nanoseconds.
        let nanoseconds = Int(min(seconds, 316_000_000)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        timer.schedule(deadline: .now() + .nanoseconds(max(0, nanoseconds)), leeway: .milliseconds(1))
        timer.activate()
        defer { timer.cancel() }
        do {
            return try await withTaskCancellationHandler {
                try await attempt.value
            } onCancel: {
                attempt.cancel()
            }
        } catch {
            if fired.withLock({ $0 }) { throw URLError(.timedOut) }
            throw error
        }
    }

    /// A clock adopting ``OptoLinkDeadlineClock`` runs the deadline itself; any other
    /// clock sleeps for `timeout`.
    private static func sleep(_ timeout: Duration, on clock: any Clock<Duration>) async throws {
        if let deadlineClock = clock as? any OptoLinkDeadlineClock {
            try await deadlineClock.sleepUntilDeadline(timeout)
        } else {
            try await clock.sleep(for: timeout)
        }
    }
}
