import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The per-attempt deadline (docs/CONTRACT.md §2, timeout per attempt), enforced by the SDK on the
/// injected ``OptoLinkClock`` rather than by URLSession's whole-second idle timer.
///
/// One implementation for every clock: the attempt runs in a task of its own, and a timer armed
/// on the clock (``OptoLinkClock/startTimer(until:expire:)``) cancels it when the deadline passes.
/// The system clock's timer is a dispatch timer source; a virtual test clock's fires when the test
/// advances it, so virtual-time tests run this same code.
/// `package`, not `public`: this package's tests race attempts against it directly; apps never see it.
package enum OptoLinkAttemptDeadline {
    /// Runs `operation` against a deadline of `timeout` from now on `clock`; whichever ends first
    /// wins and the other is cancelled.
    ///
    /// The timer cancels the attempt's task when it fires; the race then reports
    /// `URLError(.timedOut)` once the attempt has ended, unless the attempt still returned a
    /// response. Cancelling the caller cancels the attempt.
    ///
    /// - Throws: `URLError(.timedOut)` when the deadline passed first; otherwise what `operation`
    ///   throws. Returns only once the attempt has ended, so an operation must honour cancellation.
    package static func race(
        _ timeout: OptoLinkDuration, on clock: any OptoLinkClock,
        _ operation: @escaping @Sendable () async throws -> OptoLinkHTTPResponse
    ) async throws -> OptoLinkHTTPResponse {
        let attempt = Task { try await operation() }
        let fired = LockedBox(false)
        let timer = clock.startTimer(until: clock.instant.advanced(by: timeout)) {
            fired.withLock { $0 = true }
            attempt.cancel()
        }
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
}
