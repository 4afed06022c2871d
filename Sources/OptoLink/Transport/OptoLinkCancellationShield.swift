import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Runs an operation in a detached task, so cancelling the caller never cancels the operation.
/// The caller gets `URLError(.cancelled)` at once, and the operation finishes on its own.
///
/// Why it exists: on Linux (swift-corelibs-foundation, seen with Swift 6.3.1), cancelling a
/// task suspended in `URLSession.data(for:)` calls `URLSessionTask.cancel()`, a
/// `DispatchQueue.sync` onto the session's queue, while the Swift runtime holds the task's
/// status lock. If that queue is at the same moment resuming the task's continuation, which
/// takes the same lock, the process deadlocks. The SDK cancels whenever its per-attempt
/// deadline fires (docs/CONTRACT.md §2, timeout per attempt), so ``URLSessionTransport`` sends through
/// this shield on Linux. The orphaned request stays bounded by the request's `timeoutInterval`.
package enum OptoLinkCancellationShield {
    /// Resumes a continuation exactly once, with whichever comes first: the result or the cancellation.
    final class Once<T: Sendable>: Sendable {
        private struct State: Sendable {
            var continuation: CheckedContinuation<T, any Error>?
            var pending: Result<T, any Error>?
            var done = false
        }

        private let state = LockedBox(State())

        func attach(_ continuation: CheckedContinuation<T, any Error>) {
            let ready: Result<T, any Error>? = state.withLock { s in
                if let pending = s.pending {
                    s.pending = nil
                    return pending
                }
                s.continuation = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }

        func finish(_ result: Result<T, any Error>) {
            let continuation: CheckedContinuation<T, any Error>? = state.withLock { s in
                guard !s.done else { return nil }
                s.done = true
                guard let c = s.continuation else {
                    s.pending = result
                    return nil
                }
                s.continuation = nil
                return c
            }
            continuation?.resume(with: result)
        }
    }

    /// Runs `operation` detached from the caller's cancellation.
    ///
    /// - Throws: what `operation` throws, or `URLError(.cancelled)` as soon as the caller is cancelled.
    package static func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let once = Once<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                once.attach(continuation)
                Task.detached {
                    do {
                        once.finish(.success(try await operation()))
                    } catch {
                        once.finish(.failure(error))
                    }
                }
            }
        } onCancel: {
            // Never resume under the runtime's cancellation lock: hop to a queue first.
            DispatchQueue.global().async { once.finish(.failure(URLError(.cancelled))) }
        }
    }
}

extension URLSession {
    /// `data(for:)` that is safe to cancel on every platform.
    ///
    /// On Linux the request runs behind a cancellation shield (see ``URLSessionTransport``):
    /// cancelling the caller throws `URLError(.cancelled)` at once, and the request ends on
    /// its own within its `timeoutInterval`. On Apple platforms this is plain `data(for:)`.
    ///
    /// - Returns: the body and response, as `data(for:)` does.
    /// - Throws: `URLError` when no response arrived, including `.cancelled`.
    public func optoLinkData(for request: URLRequest) async throws -> (Data, URLResponse) {
        #if canImport(FoundationNetworking)
            let session = self
            return try await OptoLinkCancellationShield.run { try await session.data(for: request) }
        #else
            return try await data(for: request)
        #endif
    }
}
