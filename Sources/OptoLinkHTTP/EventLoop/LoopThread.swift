import CEpoll

/// Starts and joins the POSIX threads that run event loops (no Foundation `Thread`).
///
/// Threads are identified by ``Handle``, the `pthread_t` as an integer, because `pthread_t` is an
/// integer on Glibc and a non-optional pointer on Darwin; the C shim converts both ways.
package enum LoopThread {
    package typealias Handle = UInt

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts a thread running `body`.
    ///
    /// - Throws: ``HTTPServerError/systemCall(_:errno:)`` when `pthread_create` fails.
    package static func spawn(_ body: @escaping @Sendable () -> Void) throws -> Handle {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread: UInt = 0
        let rc = cepoll_thread_spawn(
            { raw in
                guard let raw else { return nil }
                let body = Unmanaged<Body>.fromOpaque(raw).takeRetainedValue()
                body.run()
                return nil
            }, context, &thread)
        guard rc == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw HTTPServerError.systemCall("pthread_create", errno: rc)
        }
        return thread
    }

    package static func join(_ thread: Handle) {
        _ = cepoll_thread_join(thread)
    }

    /// Lets the thread release its resources on exit; nobody will join it.
    package static func detach(_ thread: Handle) {
        _ = cepoll_thread_detach(thread)
    }

    /// Waits for `threads` to exit without blocking a cooperative thread: a short-lived thread joins
    /// them (or, when none can be spared, the caller's thread does).
    static func joinAll(_ threads: [Handle]) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            do {
                let joiner = try spawn {
                    for thread in threads { join(thread) }
                    continuation.resume()
                }
                detach(joiner)
            } catch {
                for thread in threads { join(thread) }
                continuation.resume()
            }
        }
    }
}

/// A named POSIX thread at a lower scheduling priority (a higher nice value), for background work
/// that must not take a core from the event loops when both are busy (the soak recorder's writer).
package struct LowPriorityThread: Sendable {
    private let handle: LoopThread.Handle

    /// Starts `body` on a new thread named `name` (at most 15 bytes show) at nice value `nice`
    /// (Linux; elsewhere the priority is left as it is).
    ///
    /// - Throws: ``HTTPServerError/systemCall(_:errno:)`` when `pthread_create` fails.
    package static func start(name: String, nice: Int32, _ body: @escaping @Sendable () -> Void) throws -> Self {
        Self(
            handle: try LoopThread.spawn {
                cepoll_set_thread_name(name)
                _ = cepoll_lower_thread_priority(nice)
                body()
            })
    }

    /// Waits for the thread's body to return.
    package func join() { LoopThread.join(handle) }
}
