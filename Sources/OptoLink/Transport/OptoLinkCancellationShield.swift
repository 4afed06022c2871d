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
    /// its own within its `timeoutInterval`. A request with a body whose reused keep-alive
    /// connection the server reset (or closed) before any response fails at once with
    /// `URLError(.networkConnectionLost)` instead of stalling until that timeout (docs/LINUX.md
    /// §1, "A reset on a reused connection"). An `http://[::1]:port` URL goes to `localhost`
    /// with the `Host` field kept (FoundationNetworking refuses IPv6 literals; see
    /// `URLRequest.rewritingLoopbackIPv6()`). On Apple platforms this is plain `data(for:)`.
    ///
    /// - Returns: the body and response, as `data(for:)` does.
    /// - Throws: `URLError` when no response arrived, including `.cancelled` and
    ///   `.networkConnectionLost`.
    public func optoLinkData(for request: URLRequest) async throws -> (Data, URLResponse) {
        #if canImport(FoundationNetworking)
            let session = self
            let request = request.rewritingLoopbackIPv6()
            return try await OptoLinkCancellationShield.run {
                try await session.dataFailingLostConnections(for: request)
            }
        #else
            return try await data(for: request)
        #endif
    }
}

#if canImport(FoundationNetworking)
    extension URLSession {
        /// `data(for:)` that reports a connection lost before the response at once, body or not.
        ///
        /// Why: when a reused keep-alive connection dies before any response byte, libcurl sends
        /// the request again on a fresh connection and first asks to rewind the body. In
        /// swift-corelibs-foundation that rewind does nothing for an in-memory body (`httpBody`),
        /// so the second send waits for body bytes that never come, and the task ends only at
        /// its `timeoutInterval` as `.timedOut`. The rewind request reaches the task's delegate
        /// as `needNewBodyStream`, and only in that case: this method answers it by failing the
        /// request as `.networkConnectionLost` and cancelling the stalled task. Body-less
        /// requests are unaffected (libcurl's re-send works for them, and a second reset is
        /// reported as `.networkConnectionLost` by Foundation itself).
        func dataFailingLostConnections(for request: URLRequest) async throws -> (Data, URLResponse) {
            let once = OptoLinkCancellationShield.Once<(Data, URLResponse)>()
            return try await withCheckedThrowingContinuation { continuation in
                once.attach(continuation)
                let task = dataTask(with: request) { data, response, error in
                    if let error {
                        once.finish(.failure(error))
                    } else if let response {
                        once.finish(.success((data ?? Data(), response)))
                    } else {
                        once.finish(.failure(URLError(.badServerResponse)))
                    }
                }
                task.delegate = LostConnectionDelegate { stalled in
                    once.finish(.failure(URLError(.networkConnectionLost)))
                    // The delegate runs on the session's queue; `cancel()` syncs onto it, so hop off first.
                    DispatchQueue.global().async { stalled.cancel() }
                }
                task.resume()
            }
        }
    }

    /// Turns libcurl's "rewind the body" request (a reused connection died before any response)
    /// into a lost-connection failure; see ``URLSession/dataFailingLostConnections(for:)``.
    final class LostConnectionDelegate: NSObject, URLSessionTaskDelegate, Sendable {
        private let lost: @Sendable (URLSessionTask) -> Void

        init(lost: @escaping @Sendable (URLSessionTask) -> Void) {
            self.lost = lost
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask,
            needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
        ) {
            // Answer at once: Foundation blocks the session's queue (up to 7 s) until this is called.
            completionHandler(nil)
            lost(task)
        }
    }
#endif
