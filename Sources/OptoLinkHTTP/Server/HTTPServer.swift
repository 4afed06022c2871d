import CEpoll
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A non-blocking HTTP/1.1 server: event loops (epoll on Linux, `poll(2)` elsewhere; see
/// ``EventLoopBackend``) on their own threads, keep-alive, pipelining, `Content-Length` bodies,
/// timers for delayed responses and timeouts.
///
/// Lifecycle: `init` (no I/O) → ``start()`` (binds and listens; then ``port``) → ``shutdown()``
/// (stops accepting, closes idle connections, lets in-flight and delayed responses finish within
/// ``Timeouts/shutdownGrace``, joins the threads). ``withHTTPServer(_:handler:isolation:_:)`` does
/// all three around a body. The handler runs synchronously on a loop thread; it must not block.
/// Hostile input is answered by the server itself (see ``HTTPParseError``) and closes only that
/// connection. Not thread-per-connection: each loop serves thousands of sockets.
package final class HTTPServer: Sendable {
    /// The configuration the server was created with.
    package let configuration: Configuration
    private let handler: HTTPHandler
    private let errorRenderer: HTTPErrorRenderer
    private let state = Mutex<State>(State())

    private struct State {
        enum Phase { case created, running, stopping, stopped }
        var phase = Phase.created
        var port = 0
        var backend: EventLoopBackend?
        var shared: ServerShared?
        var threads: [LoopThread.Handle] = []
        var wakers: [Waker] = []
        /// The one stop sequence; every shutdown() caller awaits it.
        var stopping: Task<Void, Never>?
    }

    /// A server that will serve `handler`; nothing is bound until ``start()``.
    ///
    /// - Parameter errorRenderer: builds the body of the errors the server answers by itself
    ///   (400, 408, 411, 413, 431, 501, 505); `text/plain` by default.
    package init(
        configuration: Configuration = .init(), errorRenderer: @escaping HTTPErrorRenderer = plainTextErrorRenderer,
        handler: @escaping HTTPHandler
    ) {
        self.configuration = configuration
        self.errorRenderer = errorRenderer
        self.handler = handler
    }

    deinit {
        // Dropped while running without shutdown() (a running shutdown() would hold `self`): ask the
        // loops to drain, close their own wake-up channels on the way out, and let the threads go.
        state.withLock { state in
            guard state.phase == .running, let shared = state.shared else { return }
            shared.loopsCloseWakeFDs.store(true, ordering: .releasing)
            shared.shuttingDown.store(true, ordering: .releasing)
            for waker in state.wakers { waker.signal() }
            for thread in state.threads { LoopThread.detach(thread) }
        }
    }

    /// The bound TCP port (the kernel's pick when the configuration said 0); 0 before ``start()``.
    package var port: Int { state.withLock { $0.port } }

    /// The readiness backend the loops run on; nil before ``start()``.
    package var eventLoopBackend: EventLoopBackend? { state.withLock { $0.backend } }

    /// A snapshot of the connection, request and error counters (zero before ``start()``).
    package func counters() -> Counters {
        state.withLock { $0.shared }?.counters() ?? Counters()
    }

    /// Descriptors the server holds now (3 per loop while running: listener + epoll set + eventfd, or
    /// listener + wake-up pipe; plus one per connection); 0 after shutdown.
    package func descriptorsHeld() -> Int {
        state.withLock { $0.shared }?.descriptorsHeld.load(ordering: .relaxed) ?? 0
    }

    /// Binds, listens and starts the event-loop threads; returns once the port is accepting.
    ///
    /// - Throws: ``HTTPServerError/invalidHost(_:)``, ``HTTPServerError/invalidConfiguration(_:)``
    ///   (also for an `OPTOLINK_EVENT_LOOP` value or backend this platform cannot run),
    ///   ``HTTPServerError/systemCall(_:errno:)`` (e.g. `bind` with EADDRINUSE), or
    ///   ``HTTPServerError/alreadyStarted`` on a second call.
    package func start() throws {
        try state.withLock { (state: inout State) throws(HTTPServerError) in
            guard state.phase == .created else { throw .alreadyStarted }
            let backend = try Self.validatedBackend(configuration)
            cepoll_ignore_sigpipe()
            let shared = ServerShared(loopCount: configuration.loopCount)
            let (setups, port) = try openLoops(backend: backend, shared: shared)
            state.port = port
            state.threads = try Self.spawnThreads(setups, backend: backend, shared: shared)
            state.backend = backend
            state.shared = shared
            state.wakers = setups.map(\.waker)
            state.phase = .running
        }
    }

    /// The configuration's limits checked, and the readiness backend it asks for (or the platform's
    /// default, or `OPTOLINK_EVENT_LOOP`'s) if this platform can run it.
    private static func validatedBackend(_ configuration: Configuration) throws(HTTPServerError) -> EventLoopBackend {
        guard (0...65535).contains(configuration.port) else {
            throw .invalidConfiguration("port \(configuration.port)")
        }
        guard configuration.loopCount >= 1 else { throw .invalidConfiguration("loopCount < 1") }
        guard configuration.maxConnections >= 1 else { throw .invalidConfiguration("maxConnections < 1") }
        let backend: EventLoopBackend
        if let configured = configuration.eventLoopBackend {
            backend = configured
        } else {
            backend = try EventLoopBackend.resolve()
        }
        guard backend.isAvailable else {
            throw .invalidConfiguration("event loop backend \(backend.rawValue) is Linux-only; use poll")
        }
        return backend
    }

    /// Opens each loop's listener (sharing one port with `SO_REUSEPORT` when there are several),
    /// poller and waker; on failure releases every descriptor opened so far.
    private func openLoops(
        backend: EventLoopBackend, shared: ServerShared
    ) throws(HTTPServerError) -> (setups: [ServerLoopSetup], port: Int) {
        let portable = backend == .poll
        var descriptors: [Int32] = []
        var setups: [ServerLoopSetup] = []
        do {
            var boundPort = configuration.port
            if configuration.loopCount > 1, boundPort != 0 {
                try ListeningSocket.probeFree(host: configuration.host, port: boundPort, portable: portable)
            }
            for index in 0..<configuration.loopCount {
                let listener = try ListeningSocket.open(
                    host: configuration.host, port: boundPort, reusePort: configuration.loopCount > 1,
                    backlog: configuration.backlog, portable: portable)
                descriptors.append(shared.track(listener.fd))
                boundPort = listener.port
                let pollerFD = try Self.openPollerDescriptor(backend)
                if pollerFD >= 0 { descriptors.append(shared.track(pollerFD)) }
                let waker = try Waker.open(portable: portable)
                for fd in waker.descriptors { descriptors.append(shared.track(fd)) }
                setups.append(
                    ServerLoopSetup(
                        pollerFD: pollerFD, waker: waker, listenFD: listener.fd, configuration: configuration,
                        handler: handler, errorRenderer: errorRenderer, shared: shared,
                        counters: shared.loops[index]))
            }
            return (setups, boundPort)
        } catch let error as HTTPServerError {
            for fd in descriptors { shared.release(fd) }
            throw error
        } catch {
            for fd in descriptors { shared.release(fd) }
            throw .invalidConfiguration("\(error)")
        }
    }

    /// Starts one thread per loop; if one cannot start, stops the loops already running and releases
    /// what the others would have owned.
    private static func spawnThreads(
        _ setups: [ServerLoopSetup], backend: EventLoopBackend, shared: ServerShared
    ) throws(HTTPServerError) -> [LoopThread.Handle] {
        var threads: [LoopThread.Handle] = []
        for setup in setups {
            do {
                threads.append(
                    try LoopThread.spawn { [name = "optolink-http-\(threads.count)"] in
                        cepoll_set_thread_name(name)
                        Self.runLoop(setup, backend: backend)
                    })
            } catch {
                shared.shuttingDown.store(true, ordering: .releasing)
                for started in setups.prefix(threads.count) { started.waker.signal() }
                for thread in threads { LoopThread.join(thread) }
                for pending in setups.dropFirst(threads.count) {
                    shared.release(pending.listenFD)
                    if pending.pollerFD >= 0 { shared.release(pending.pollerFD) }
                }
                for setup in setups { for fd in setup.waker.descriptors { shared.release(fd) } }
                throw error as? HTTPServerError ?? .systemCall("pthread_create", errno: 0)
            }
        }
        return threads
    }

    /// The backend's own descriptor for one loop (an epoll set), or -1 for `poll`, which needs none.
    ///
    /// - Throws: ``HTTPServerError/systemCall(_:errno:)`` when the kernel refuses one.
    private static func openPollerDescriptor(_ backend: EventLoopBackend) throws(HTTPServerError) -> Int32 {
        switch backend {
        case .poll:
            return -1
        case .epoll:
            #if os(Linux)
                return try EpollPoller.create()
            #else
                throw .invalidConfiguration("event loop backend epoll is Linux-only; use poll")
            #endif
        }
    }

    /// Runs one loop on the calling thread with the backend chosen at start, until it drains.
    private static func runLoop(_ setup: ServerLoopSetup, backend: EventLoopBackend) {
        switch backend {
        case .epoll:
            #if os(Linux)
                ServerLoop(setup, poller: EpollPoller(epollFD: setup.pollerFD)).run()
            #endif
        case .poll:
            ServerLoop(setup, poller: PollPoller()).run()
        }
    }

    /// Stops gracefully and returns once every loop thread has exited.
    ///
    /// Stops accepting at once, closes idle keep-alive connections, answers requests in progress
    /// (their responses carry `Connection: close`), lets delayed responses finish, and closes
    /// whatever remains after ``Timeouts/shutdownGrace``. Safe to call more than once, concurrently,
    /// or before ``start()``.
    package func shutdown() async {
        let stopping = state.withLock { state -> Task<Void, Never>? in
            switch state.phase {
            case .created:
                state.phase = .stopped
                return nil
            case .running:
                state.phase = .stopping
                guard let shared = state.shared else { return nil }
                let threads = state.threads
                let wakers = state.wakers
                let task = Task { await Self.stop(shared: shared, threads: threads, wakers: wakers) }
                state.stopping = task
                return task
            case .stopping:
                return state.stopping
            case .stopped:
                return nil
            }
        }
        await stopping?.value
        state.withLock { state in
            state.phase = .stopped
            state.threads = []
            state.wakers = []
        }
    }

    /// Signals every loop to drain, waits for their threads without blocking a cooperative thread,
    /// then closes the wake-up channels (no loop uses them any more).
    private static func stop(shared: ServerShared, threads: [LoopThread.Handle], wakers: [Waker]) async {
        shared.shuttingDown.store(true, ordering: .releasing)
        for waker in wakers { waker.signal() }
        await LoopThread.joinAll(threads)  // may take up to the shutdown grace
        for waker in wakers { for fd in waker.descriptors { shared.release(fd) } }
    }
}

/// Runs `body` with a started server and shuts it down afterwards, whether `body` returns or throws.
///
/// - Throws: what ``HTTPServer/start()`` throws (then `body` does not run), or what `body` throws.
package func withHTTPServer<T>(
    _ configuration: HTTPServer.Configuration = .init(),
    handler: @escaping HTTPHandler,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (HTTPServer) async throws -> T
) async throws -> T {
    let server = HTTPServer(configuration: configuration, handler: handler)
    try server.start()
    do {
        let result = try await body(server)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}
