extension HTTPServer {
    /// Where the server listens, how many event loops it runs, and its limits and timeouts.
    package struct Configuration: Sendable, Equatable {
        /// The address to bind: an IPv4 or IPv6 literal (`127.0.0.1`, `::1`, `0.0.0.0`, `::`)
        /// or `localhost` (meaning 127.0.0.1). Names are not resolved.
        package var host: String
        /// The TCP port; 0 asks the kernel for a free one (read it back from ``HTTPServer/port``).
        package var port: Int
        /// Event-loop threads (≥ 1), each with its own poller and its own `SO_REUSEPORT` listener;
        /// the kernel spreads new connections across them. Default 2: on a 2-core machine, with wrk
        /// beside it, 2 loops match 1 when the machine is quiet and do better under background
        /// load; an idle loop costs nothing.
        package var loopCount: Int
        /// Request size limits and framing rules.
        package var limits: HTTPRequestParser.Limits
        /// Idle, slow-client and shutdown bounds.
        package var timeouts: Timeouts
        /// Open connections across all loops; a connection accepted beyond this is closed at once.
        package var maxConnections: Int
        /// `listen(2)` backlog (the kernel caps it at `net.core.somaxconn`).
        package var backlog: Int
        /// The readiness backend; nil (the default) means `OPTOLINK_EVENT_LOOP` if set, else the
        /// platform's (see ``EventLoopBackend``). ``HTTPServer/start()`` refuses one the platform lacks.
        package var eventLoopBackend: EventLoopBackend?

        /// A loopback server on an ephemeral port with default limits and timeouts.
        package init(
            host: String = "127.0.0.1", port: Int = 0, loopCount: Int = 2,
            limits: HTTPRequestParser.Limits = .init(), timeouts: Timeouts = .init(),
            maxConnections: Int = 16_384, backlog: Int = 4096, eventLoopBackend: EventLoopBackend? = nil
        ) {
            self.host = host
            self.port = port
            self.loopCount = loopCount
            self.limits = limits
            self.timeouts = timeouts
            self.maxConnections = maxConnections
            self.backlog = backlog
            self.eventLoopBackend = eventLoopBackend
        }
    }

    /// Connection time bounds, as `Duration`s (resolution: milliseconds on the event loop).
    package struct Timeouts: Sendable, Equatable {
        /// A keep-alive connection with no request in progress is closed after this long (default 60 s).
        package var idle: Duration
        /// A request must arrive completely within this long after its first byte, and a pending
        /// response must make write progress within it; otherwise 408 (or, for writes, a close). Default 30 s.
        package var request: Duration
        /// After ``HTTPServer/shutdown()`` starts, in-flight and delayed responses get this long before
        /// their connections are closed regardless (default 5 s).
        package var shutdownGrace: Duration
        /// How long a closing connection keeps reading (and discarding) after its last response, so
        /// the client sees the response rather than a reset (default 2 s).
        var lingeringClose: Duration

        /// The defaults above; each argument overrides one.
        package init(
            idle: Duration = .seconds(60), request: Duration = .seconds(30),
            shutdownGrace: Duration = .seconds(5), lingeringClose: Duration = .seconds(2)
        ) {
            self.idle = idle
            self.request = request
            self.shutdownGrace = shutdownGrace
            self.lingeringClose = lingeringClose
        }
    }
}

extension Duration {
    /// Whole nanoseconds, clamped at zero and at `UInt64.max / 4` (about 146 years).
    var nanosecondsClamped: UInt64 {
        let (seconds, attoseconds) = components
        if seconds < 0 { return 0 }
        if seconds > 4_000_000_000 { return UInt64.max / 4 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}
