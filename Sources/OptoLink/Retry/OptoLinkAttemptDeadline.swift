import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The per-attempt deadline (CONTRACT §2, timeout per attempt), enforced by the SDK on the
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
        try await withThrowingTaskGroup(of: OptoLinkHTTPResponse?.self) { group in
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
