import Dispatch
import Foundation
import OptoLink
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs an operation in a detached task so that cancelling the caller never cancels it:
/// the caller gets `URLError(.cancelled)` at once and the operation finishes on its own.
///
/// Why: on Linux, cancelling a task suspended in `URLSession.data(for:)` runs
/// `URLSessionTask.cancel()` — a `DispatchQueue.sync` onto the session's queue — while the
/// Swift runtime holds the task's status lock; if that queue is at the same moment resuming
/// the task's continuation (which takes the same lock), the process deadlocks. Observed here
/// with swift-corelibs-foundation (Swift 6.3.1) when a run's grace period cancelled in-flight
/// calls. The orphaned request stays bounded by the session's `timeoutIntervalForRequest`.
enum CancellationShield {
    /// Resumes a continuation exactly once, whichever of result or cancellation comes first.
    final class Once<T: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<T, any Error>?
            var pending: Result<T, any Error>?
            var done = false
        }

        private let state = Mutex(State())

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

    static func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
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

/// The shared transport wrapped in a ``CancellationShield``: the SDK's per-attempt deadline
/// and the run's grace period cancel the *wait*, never the URLSession task itself.
public struct ShieldedTransport: OptoLinkTransport {
    public let inner: any OptoLinkTransport

    public init(_ inner: any OptoLinkTransport) { self.inner = inner }

    public func send(_ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext) async throws
        -> OptoLinkHTTPResponse
    {
        let inner = self.inner
        return try await CancellationShield.run { try await inner.send(request, context: context) }
    }
}

extension URLSession {
    /// `data(for:)` behind a ``CancellationShield`` (for the driver's own browser and probe requests).
    func shieldedData(for request: URLRequest) async throws -> (Data, URLResponse) {
        let session = self
        return try await CancellationShield.run { try await session.data(for: request) }
    }
}
