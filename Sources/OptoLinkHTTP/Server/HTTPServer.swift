import CEpoll
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A non-blocking HTTP/1.1 server: epoll event loops on their own threads, keep-alive,
/// pipelining, `Content-Length` bodies, timers for delayed responses and timeouts.
///
/// Lifecycle: `init` (no I/O) → ``start()`` (binds and listens; then ``port``) → ``shutdown()``
/// (stops accepting, closes idle connections, lets in-flight and delayed responses finish within
/// ``Timeouts/shutdownGrace``, joins the threads). ``withHTTPServer(_:handler:isolation:_:)`` does
/// all three around a body. The handler runs synchronously on a loop thread; it must not block.
/// Hostile input is answered by the server itself (see ``HTTPParseError``) and closes only that
/// connection. Not thread-per-connection: each loop serves thousands of sockets.
public final class HTTPServer: Sendable {
    /// The configuration the server was created with.
    public let configuration: Configuration
    private let handler: HTTPHandler
    private let errorRenderer: HTTPErrorRenderer
    private let state = Mutex<State>(State())

    private struct State {
        enum Phase { case created, running, stopping, stopped }
        var phase = Phase.created
        var port = 0
        var shared: ServerShared?
        var threads: [pthread_t] = []
        var wakeFDs: [Int32] = []
        /// The one stop sequence; every shutdown() caller awaits it.
        var stopping: Task<Void, Never>?
    }

    /// A server that will serve `handler`; nothing is bound until ``start()``.
    ///
    /// - Parameter errorRenderer: builds the body of the errors the server answers by itself
    ///   (400, 408, 411, 413, 431, 501, 505); `text/plain` by default.
    public init(
        configuration: Configuration = .init(), errorRenderer: @escaping HTTPErrorRenderer = plainTextErrorRenderer,
        handler: @escaping HTTPHandler
    ) {
        self.configuration = configuration
        self.errorRenderer = errorRenderer
        self.handler = handler
    }

    deinit {
        // Dropped while running without shutdown() (a running shutdown() would hold `self`): ask the
        // loops to drain, close their own eventfds on the way out, and let the threads go.
        state.withLock { state in
            guard state.phase == .running, let shared = state.shared else { return }
            shared.loopsCloseWakeFDs.store(true, ordering: .releasing)
            shared.shuttingDown.store(true, ordering: .releasing)
            for fd in state.wakeFDs { _ = cepoll_eventfd_signal(fd) }
            for thread in state.threads { pthread_detach(thread) }
        }
    }

    /// The bound TCP port (the kernel's pick when the configuration said 0); 0 before ``start()``.
    public var port: Int { state.withLock { $0.port } }

    /// A snapshot of the connection, request and error counters (zero before ``start()``).
    public func counters() -> Counters {
        state.withLock { $0.shared }?.counters() ?? Counters()
    }

    /// Descriptors the server holds now (3 per loop while running, plus one per connection); 0 after shutdown.
    func descriptorsHeld() -> Int {
        state.withLock { $0.shared }?.descriptorsHeld.load(ordering: .relaxed) ?? 0
    }

    /// Binds, listens and starts the event-loop threads; returns once the port is accepting.
    ///
    /// - Throws: ``HTTPServerError/invalidHost(_:)``, ``HTTPServerError/invalidConfiguration(_:)``,
    ///   ``HTTPServerError/systemCall(_:errno:)`` (e.g. `bind` with EADDRINUSE), or
    ///   ``HTTPServerError/alreadyStarted`` on a second call.
    public func start() throws {
        try state.withLock { (state: inout State) throws(HTTPServerError) in
            guard state.phase == .created else { throw .alreadyStarted }
            let configuration = configuration
            guard (0...65535).contains(configuration.port) else {
                throw .invalidConfiguration("port \(configuration.port)")
            }
            guard configuration.loopCount >= 1 else { throw .invalidConfiguration("loopCount < 1") }
            guard configuration.maxConnections >= 1 else { throw .invalidConfiguration("maxConnections < 1") }
            cepoll_ignore_sigpipe()

            let shared = ServerShared(loopCount: configuration.loopCount)
            var descriptors: [Int32] = []
            var setups: [EventLoop.Setup] = []
            do {
                var boundPort = configuration.port
                if configuration.loopCount > 1, boundPort != 0 {
                    try ListeningSocket.probeFree(host: configuration.host, port: boundPort)
                }
                for index in 0..<configuration.loopCount {
                    let listener = try ListeningSocket.open(
                        host: configuration.host, port: boundPort, reusePort: configuration.loopCount > 1,
                        backlog: configuration.backlog)
                    descriptors.append(shared.track(listener.fd))
                    boundPort = listener.port
                    let epollFD = shared.track(cepoll_create())
                    guard epollFD >= 0 else { throw HTTPServerError.systemCall("epoll_create1", errno: cepoll_errno()) }
                    descriptors.append(epollFD)
                    let wakeFD = shared.track(cepoll_eventfd())
                    guard wakeFD >= 0 else { throw HTTPServerError.systemCall("eventfd", errno: cepoll_errno()) }
                    descriptors.append(wakeFD)
                    setups.append(
                        EventLoop.Setup(
                            epollFD: epollFD, wakeFD: wakeFD, listenFD: listener.fd, configuration: configuration,
                            handler: handler, errorRenderer: errorRenderer, shared: shared,
                            counters: shared.loops[index]))
                }
                state.port = boundPort
            } catch let error as HTTPServerError {
                for fd in descriptors { shared.release(fd) }
                throw error
            } catch {
                for fd in descriptors { shared.release(fd) }
                throw .invalidConfiguration("\(error)")
            }

            var threads: [pthread_t] = []
            for setup in setups {
                do {
                    threads.append(
                        try LoopThread.spawn { [name = "optolink-http-\(threads.count)"] in
                            cepoll_set_thread_name(name)
                            EventLoop(setup).run()
                        })
                } catch {
                    // Stop the loops already running, then release what the others would have owned.
                    shared.shuttingDown.store(true, ordering: .releasing)
                    for started in setups.prefix(threads.count) { _ = cepoll_eventfd_signal(started.wakeFD) }
                    for thread in threads { LoopThread.join(thread) }
                    for pending in setups.dropFirst(threads.count) {
                        shared.release(pending.listenFD)
                        shared.release(pending.epollFD)
                    }
                    for setup in setups { shared.release(setup.wakeFD) }
                    throw error as? HTTPServerError ?? .systemCall("pthread_create", errno: 0)
                }
            }
            state.shared = shared
            state.threads = threads
            state.wakeFDs = setups.map(\.wakeFD)
            state.phase = .running
        }
    }

    /// Stops gracefully and returns once every loop thread has exited.
    ///
    /// Stops accepting at once, closes idle keep-alive connections, answers requests in progress
    /// (their responses carry `Connection: close`), lets delayed responses finish, and closes
    /// whatever remains after ``Timeouts/shutdownGrace``. Safe to call more than once, concurrently,
    /// or before ``start()``.
    public func shutdown() async {
        let stopping = state.withLock { state -> Task<Void, Never>? in
            switch state.phase {
            case .created:
                state.phase = .stopped
                return nil
            case .running:
                state.phase = .stopping
                guard let shared = state.shared else { return nil }
                let threads = state.threads
                let wakeFDs = state.wakeFDs
                let task = Task { await Self.stop(shared: shared, threads: threads, wakeFDs: wakeFDs) }
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
            state.wakeFDs = []
        }
    }

    /// Signals every loop to drain, waits for their threads without blocking a cooperative thread,
    /// then closes the eventfds (no loop uses them any more).
    private static func stop(shared: ServerShared, threads: [pthread_t], wakeFDs: [Int32]) async {
        shared.shuttingDown.store(true, ordering: .releasing)
        for fd in wakeFDs { _ = cepoll_eventfd_signal(fd) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            do {
                // Joining may take up to the shutdown grace: a short-lived thread does it.
                let joiner = try LoopThread.spawn {
                    for thread in threads { LoopThread.join(thread) }
                    continuation.resume()
                }
                pthread_detach(joiner)
            } catch {
                for thread in threads { LoopThread.join(thread) }  // no thread to spare: join here
                continuation.resume()
            }
        }
        for fd in wakeFDs { shared.release(fd) }
    }
}

/// Runs `body` with a started server and shuts it down afterwards, whether `body` returns or throws.
///
/// - Throws: what ``HTTPServer/start()`` throws (then `body` does not run), or what `body` throws.
public func withHTTPServer<T>(
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
