import CEpoll

/// Starts and joins the POSIX threads that run event loops (no Foundation `Thread`).
///
/// Threads are identified by ``Handle``, the `pthread_t` as an integer, because `pthread_t` is an
/// integer on Glibc and a non-optional pointer on Darwin; the C shim converts both ways.
enum LoopThread {
    typealias Handle = UInt

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts a thread running `body`.
    ///
    /// - Throws: ``HTTPServerError/systemCall(_:errno:)`` when `pthread_create` fails.
    static func spawn(_ body: @escaping @Sendable () -> Void) throws -> Handle {
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

    static func join(_ thread: Handle) {
        _ = cepoll_thread_join(thread)
    }

    /// Lets the thread release its resources on exit; nobody will join it.
    static func detach(_ thread: Handle) {
        _ = cepoll_thread_detach(thread)
    }
}
