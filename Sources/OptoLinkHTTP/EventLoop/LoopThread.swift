#if canImport(Glibc)
    import Glibc
#endif

/// Starts and joins the POSIX threads that run event loops (no Foundation `Thread`).
enum LoopThread {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts a thread running `body`.
    ///
    /// - Throws: ``HTTPServerError/systemCall(_:errno:)`` when `pthread_create` fails.
    static func spawn(_ body: @escaping @Sendable () -> Void) throws -> pthread_t {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { raw in
                guard let raw else { return nil }
                let body = Unmanaged<Body>.fromOpaque(raw).takeRetainedValue()
                body.run()
                return nil
            }, context)
        guard rc == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw HTTPServerError.systemCall("pthread_create", errno: rc)
        }
        return thread
    }

    static func join(_ thread: pthread_t) {
        pthread_join(thread, nil)
    }
}
