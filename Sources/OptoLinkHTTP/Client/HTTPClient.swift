import CEpoll
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A lean HTTP/1.1 client over the same event loop backends and codec as ``HTTPServer``:
/// keep-alive pools per host, deadlines with nanosecond resolution, cancellation that closes the
/// socket at once, and no retries of its own.
///
/// Lifecycle: `init` starts the loop threads; ``execute(_:timeout:cancellation:)`` from any task
/// (tasks may also run on the loop threads themselves: ``taskExecutors``);
/// ``shutdown()`` fails what is pending with ``HTTPClientError/shutDown`` and closes every socket.
/// `https` requests (``HTTPClientRequest/usesTLS``) run over TLS on the system's OpenSSL
/// (Linux; see ``TLSConfiguration``). Requests to one pool are answered in order per connection; a
/// connection carries one request at a time (no pipelining). A parked connection is probed before
/// it carries a request, so one the server closed is replaced, not failed; a request that was
/// written is never sent again (its caller decides). See `docs/LINUX.md`.
///
/// Addresses: a host name's A and AAAA records are all used, new connections going round them,
/// one that stops answering skipped, the name resolved again after
/// ``Configuration/resolutionTTL`` (``AddressResolver``). A request with a
/// ``HTTPClientRequest/sourceAddress`` leaves from that local address, on connections of its own.
package final class HTTPClient: Sendable {
    /// How connections are shared between requests.
    package enum PoolMode: String, Sendable, Equatable, CaseIterable {
        /// One bounded pool per host and port, shared by every request
        /// (``Configuration/maxConnectionsPerHost`` connections at most).
        case shared
        /// One connection per ``HTTPClientRequest/partition`` (e.g. per virtual device), as real
        /// devices each hold their own; requests without a partition use the shared pool.
        case perPartition = "per-device"
    }

    /// Pools, limits and timeouts of one client.
    package struct Configuration: Sendable, Equatable {
        /// How connections are shared.
        package var poolMode: PoolMode
        /// Most open connections per host and port in the shared mode, across all loops (≥ 1).
        package var maxConnectionsPerHost: Int
        /// Loop threads (≥ 1); each owns its own connections.
        package var loopCount: Int
        /// An idle keep-alive connection is closed after this long (keep it below the server's idle timeout).
        package var idleTimeout: Duration
        /// With `Expect: 100-continue`, how long to wait for `100 Continue` before sending the body anyway.
        package var continueTimeout: Duration
        /// Response size limits.
        package var responseLimits: HTTPResponseParser.Limits
        /// The readiness backend; `nil`: the platform default or `OPTOLINK_EVENT_LOOP`.
        package var eventLoopBackend: EventLoopBackend?
        /// How long a host name's addresses are used before `getaddrinfo` is asked again (see
        /// ``HTTPClient`` on addresses); IP literals are never resolved again.
        var resolutionTTL: Duration = .seconds(30)
        /// Host name → the numeric addresses it resolves to, in order, instead of the system
        /// resolver (tests: a name with an address where nothing listens, then one where a server does).
        package var addressOverrides: [String: [String]] = [:]
        /// How `https` connections verify the server (system trust store by default).
        package var tls: TLSConfiguration

        /// Defaults: shared pool of 64 connections per host, 1 loop, 30 s idle, 1 s continue wait.
        package init(
            poolMode: PoolMode = .shared, maxConnectionsPerHost: Int = 64, loopCount: Int = 1,
            idleTimeout: Duration = .seconds(30), continueTimeout: Duration = .seconds(1),
            responseLimits: HTTPResponseParser.Limits = .init(), eventLoopBackend: EventLoopBackend? = nil,
            tls: TLSConfiguration = .init()
        ) {
            self.tls = tls
            self.poolMode = poolMode
            self.maxConnectionsPerHost = maxConnectionsPerHost
            self.loopCount = loopCount
            self.idleTimeout = idleTimeout
            self.continueTimeout = continueTimeout
            self.responseLimits = responseLimits
            self.eventLoopBackend = eventLoopBackend
        }
    }

    /// The configuration the client runs with.
    package let configuration: Configuration
    /// The readiness backend its loops run on.
    package let eventLoopBackend: EventLoopBackend
    private let loops: [ClientLoopShared]
    private let threads: Mutex<[LoopThread.Handle]>
    private let nextId = Atomic<UInt64>(0)
    private let nextLoop = Atomic<Int>(0)
    private let resolver: AddressResolver
    private let tls: ClientTLS

    /// Starts `configuration.loopCount` loop threads.
    ///
    /// - Throws: ``HTTPServerError/invalidConfiguration(_:)`` for a count below 1, a shared pool
    ///   with fewer connections than loops, or a backend this platform lacks; ``HTTPServerError/systemCall(_:errno:)`` when a descriptor or thread cannot be made.
    package init(configuration: Configuration = .init()) throws {
        guard configuration.loopCount >= 1 else { throw HTTPServerError.invalidConfiguration("loopCount < 1") }
        guard configuration.maxConnectionsPerHost >= 1 else {
            throw HTTPServerError.invalidConfiguration("maxConnectionsPerHost < 1")
        }
        guard configuration.poolMode != .shared || configuration.maxConnectionsPerHost >= configuration.loopCount
        else {
            throw HTTPServerError.invalidConfiguration(
                "maxConnectionsPerHost \(configuration.maxConnectionsPerHost) < loopCount \(configuration.loopCount): "
                    + "each loop of a shared pool holds at least one connection")
        }
        let backend = try configuration.eventLoopBackend ?? EventLoopBackend.resolve()
        guard backend.isAvailable else {
            throw HTTPServerError.invalidConfiguration("event loop backend \(backend.rawValue) is Linux-only; use poll")
        }
        cepoll_ignore_sigpipe()
        self.configuration = configuration
        self.eventLoopBackend = backend
        self.resolver = AddressResolver(ttl: configuration.resolutionTTL, overrides: configuration.addressOverrides)
        let portable = backend == .poll
        let tls = ClientTLS(configuration: configuration.tls)
        self.tls = tls
        var loops: [ClientLoopShared] = []
        var threads: [LoopThread.Handle] = []
        do {
            for index in 0..<configuration.loopCount {
                let poolLimit = Self.poolLimit(loop: index, of: configuration)
                let shared = ClientLoopShared(waker: try Waker.open(portable: portable))
                loops.append(shared)
                let pollerFD: Int32
                switch backend {
                case .poll: pollerFD = -1
                case .epoll:
                    #if os(Linux)
                        pollerFD = try EpollPoller.create()
                    #else
                        pollerFD = -1
                    #endif
                }
                threads.append(
                    try LoopThread.spawn { [name = "optolink-cli-\(index)"] in
                        cepoll_set_thread_name(name)
                        Self.runLoop(
                            shared, pollerFD: pollerFD, configuration: configuration, poolLimit: poolLimit, tls: tls)
                    })
            }
        } catch {
            for loop in loops { loop.stopping.store(true, ordering: .releasing) }
            for loop in loops { loop.wake() }
            for thread in threads { LoopThread.join(thread) }
            for loop in loops { loop.closeWaker() }
            throw error
        }
        self.loops = loops
        self.threads = Mutex(threads)
    }

    private static func runLoop(
        _ shared: ClientLoopShared, pollerFD: Int32, configuration: Configuration, poolLimit: Int, tls: ClientTLS
    ) {
        #if os(Linux)
            if pollerFD >= 0 {
                ClientLoop(
                    poller: EpollPoller(epollFD: pollerFD), shared: shared, configuration: configuration,
                    poolLimit: poolLimit, tls: tls
                ).run()
                close(pollerFD)
                return
            }
        #endif
        ClientLoop(
            poller: PollPoller(), shared: shared, configuration: configuration, poolLimit: poolLimit, tls: tls
        ).run()
    }

    deinit {
        // Dropped without shutdown(): stop the loops, let them close their wake-up channels, let the threads go.
        let threads = self.threads.withLock { $0 }
        guard !threads.isEmpty else { return }  // shut down already: the channels are closed
        for loop in loops {
            loop.closeWakerOnExit.store(true, ordering: .releasing)
            loop.stopping.store(true, ordering: .releasing)
            loop.wake()
        }
        for thread in threads { LoopThread.detach(thread) }
    }

    /// Sends `request` once and returns its response, whatever the status.
    ///
    /// - Parameter timeout: the whole request's budget: waiting for a pooled connection,
    ///   connecting, writing and reading all count (resolution: milliseconds on the loop's wait).
    /// - Throws: ``HTTPClientError``: `.connectionRefused` / `.cannotConnect` / `.cannotResolve`
    ///   when no connection could be made, `.connectionReset` / `.connectionClosed` when the peer
    ///   ended it before the response was complete, `.badResponse` for broken framing,
    ///   `.timedOut` past `timeout`, `.cancelled` when the calling task is cancelled (the socket
    ///   is closed at once in both cases), `.shutDown` after ``shutdown()``; `.tlsFailed` when an
    ///   `https` connection's handshake fails (or TLS cannot be set up: then before any connection).
    /// - Parameter cancellation: called once, before the request is handed to its loop, with a
    ///   function that cancels the request as cancelling the calling task does (for a caller that
    ///   also cancels by other means than its task, such as a scope another thread ends).
    ///
    /// It runs on its caller's executor (`nonisolated(nonsending)`) until it waits for the
    /// response: the request is handed to a loop thread either way, and not hopping first saves a
    /// task switch per request.
    nonisolated(nonsending) package func execute(
        _ request: HTTPClientRequest, timeout: Duration,
        cancellation: ((@escaping @Sendable () -> Void) -> Void)? = nil
    ) async throws(HTTPClientError) -> HTTPClientResponse {
        guard (1...65535).contains(request.port) else { throw .invalidRequest("port \(request.port)") }
        guard !request.host.isEmpty else { throw .invalidRequest("empty host") }
        if request.usesTLS, case .failure(let failure) = tls.clientContext() { throw .tlsFailed(failure) }
        var family: Int32?
        if let source = request.sourceAddress {
            guard let known = HTTPSourceAddress.family(of: source) else {
                throw .invalidRequest("source address \(source) is not a numeric IPv4 or IPv6 address")
            }
            family = known
        }
        let addresses = try resolver.addresses(host: request.host, port: request.port, family: family)
        let id = nextId.wrappingAdd(1, ordering: .relaxed).newValue
        let loop = pickLoop(for: request)
        guard !loop.stopping.load(ordering: .acquiring) else { throw .shutDown }
        let deadline = cepoll_monotonic_ns() &+ timeout.nanosecondsClamped
        let call = ClientCall(id: id)
        // Cancelled before it reaches the loop, the loop drops it unsent (see `ClientLoop.submit`).
        cancellation?({ if call.finish(.failure(.cancelled)) { loop.post(.cancel(id)) } })
        let outcome = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<ClientCall.Outcome, Never>) in
                call.attach(continuation)
                // The loop has exited since the check above: nothing will take the request.
                if !loop.post(.submit(call, request, deadline: deadline, addresses: addresses)) {
                    call.finish(.failure(.shutDown))
                }
            }
        } onCancel: {
            if call.finish(.failure(.cancelled)) { loop.post(.cancel(id)) }
        }
        return try outcome.get()
    }

    /// The TLS handshakes completed so far, full and resumed (a resumed one skips the certificate exchange).
    package var tlsHandshakes: TLSHandshakeCounts {
        TLSHandshakeCounts(
            full: tls.fullHandshakes.load(ordering: .relaxed), resumed: tls.resumedHandshakes.load(ordering: .relaxed))
    }

    /// Fails pending requests with ``HTTPClientError/shutDown``, closes every socket and joins the loops.
    package func shutdown() async {
        let threads = self.threads.withLock { held in
            defer { held = [] }
            return held
        }
        guard !threads.isEmpty else { return }
        for loop in loops {
            loop.stopping.store(true, ordering: .releasing)
            loop.wake()
        }
        await LoopThread.joinAll(threads)
        for loop in loops { loop.closeWaker() }
    }

    /// The loop threads as task executors, one each: a task that prefers one (e.g.
    /// `group.addTask(executorPreference:)`) runs on that loop's thread between its readiness
    /// turns, and its requests go to that loop, so a request and the response that resumes the
    /// task stay on one thread. In the per-device mode, pick with ``taskExecutor(forPartition:)``.
    package var taskExecutors: [any TaskExecutor] { loops }

    /// The executor of the loop that carries `partition`'s connection in the per-device mode
    /// (in the shared mode: the loop the partition's hash picks, a stable spread).
    package func taskExecutor(forPartition partition: String) -> any TaskExecutor {
        loops[Self.loopIndex(partition: partition, count: loops.count)]
    }

    private static func loopIndex(partition: String, count: Int) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a: stable across runs, unlike hashValue
        for byte in partition.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Int(hash % UInt64(count))
    }

    /// Loop `index`'s share of ``Configuration/maxConnectionsPerHost``: the shares add up to it
    /// exactly (the first `N mod loops` loops take one more); at least 1, which only the
    /// per-device mode's shared fallback can need (the shared mode checks `N >= loops`).
    package static func poolLimit(loop index: Int, of configuration: Configuration) -> Int {
        let limit = configuration.maxConnectionsPerHost
        let extra = index < limit % configuration.loopCount ? 1 : 0
        return max(1, limit / configuration.loopCount + extra)
    }

    private func pickLoop(for request: HTTPClientRequest) -> ClientLoopShared {
        guard loops.count > 1 else { return loops[0] }
        if configuration.poolMode == .perPartition, let partition = request.partition {
            return loops[Self.loopIndex(partition: partition, count: loops.count)]
        }
        // A task running on one of the loops sends through that loop.
        if let preferred = withUnsafeCurrentTask(body: { $0?.unownedTaskExecutor }) {
            for loop in loops where loop.asUnownedTaskExecutor() == preferred { return loop }
        }
        return loops[nextLoop.wrappingAdd(1, ordering: .relaxed).newValue % loops.count]
    }
}
