import CEpoll
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a loop thread needs to start; all of it crosses from ``HTTPServer/start()`` to the thread.
struct ServerLoopSetup: Sendable {
    /// The backend's own descriptor (an epoll set), or -1 when it has none (`poll`).
    var pollerFD: Int32
    var waker: Waker
    var listenFD: Int32
    var configuration: HTTPServer.Configuration
    var handler: HTTPHandler
    var errorRenderer: HTTPErrorRenderer
    var shared: ServerShared
    var counters: LoopCounters
}

/// The server's event loop, one per thread: accepts on its listener, reads, parses, calls the handler,
/// writes, and runs its timers (delayed responses, idle/slow-client timeouts, shutdown bound).
///
/// Generic over its readiness backend (``EpollPoller`` on Linux, ``PollPoller`` anywhere), so
/// each backend's calls compile to direct calls. Everything here is touched only by the loop's
/// thread. Other threads reach it through the ``Waker`` and ``ServerShared`` (atomics), never
/// through this object.
final class ServerLoop<Poller: ReadinessPoller> {
    enum Timer {
        case connection(UInt64)
        case delayedResponse(UInt64)
        case resumeAccepting
        case shutdownBound
    }

    // Computed, not stored: generic types cannot have static stored properties.
    static var listenerToken: UInt64 { 1 << 63 }
    private static var wakeToken: UInt64 { (1 << 63) | 1 }
    private static var readChunk: Int { 64 * 1024 }
    /// Above this many unwritten bytes a connection stops reading and parsing (back-pressure).
    static var outputHighWater: Int { 256 * 1024 }

    let poller: Poller
    private let waker: Waker
    var listenFD: Int32
    let configuration: HTTPServer.Configuration
    let handler: HTTPHandler
    let errorRenderer: HTTPErrorRenderer
    let shared: ServerShared
    let counters: LoopCounters
    let idleTimeout: UInt64
    let requestTimeout: UInt64
    let lingerTimeout: UInt64

    var connections: [ServerConnection?] = []
    var openCount = 0
    var generation: UInt64 = 0
    var timers = TimerHeap<Timer>()
    var now: UInt64
    var draining = false
    var acceptPaused = false
    var dateHeader = HTTPDateHeader()
    let readBuffer: UnsafeMutableRawBufferPointer

    init(_ setup: ServerLoopSetup, poller: Poller) {
        self.poller = poller
        waker = setup.waker
        listenFD = setup.listenFD
        configuration = setup.configuration
        handler = setup.handler
        errorRenderer = setup.errorRenderer
        shared = setup.shared
        counters = setup.counters
        idleTimeout = setup.configuration.timeouts.idle.nanosecondsClamped
        requestTimeout = setup.configuration.timeouts.request.nanosecondsClamped
        lingerTimeout = setup.configuration.timeouts.lingeringClose.nanosecondsClamped
        now = cepoll_monotonic_ns()
        readBuffer = .allocate(byteCount: Self.readChunk, alignment: 16)
    }

    deinit {
        readBuffer.deallocate()
    }

    /// Runs until shutdown has drained every connection; then closes the listener and the backend's
    /// descriptor (and the wake-up channel when nobody joins this thread).
    func run() {
        _ = poller.register(waker.readFD, interest: .readable, token: Self.wakeToken)
        _ = poller.register(listenFD, interest: .readable, token: Self.listenerToken)
        if shared.shuttingDown.load(ordering: .acquiring) { beginDrain() }
        while !(draining && openCount == 0) {
            let count = poller.wait(timeoutMilliseconds: waitTimeoutMilliseconds())
            now = cepoll_monotonic_ns()
            if count < 0 {
                if cepoll_errno() == EINTR { continue }
                break
            }
            for i in 0..<count {
                let (events, token) = poller.ready(at: i)
                dispatch(events: events, token: token)
            }
            runDueTimers()
        }
        for case let connection? in connections { close(connection) }
        if listenFD >= 0 { shared.release(listenFD) }
        if let descriptor = poller.descriptor { shared.release(descriptor) }
        if shared.loopsCloseWakeFDs.load(ordering: .acquiring) {
            poller.deregister(waker.readFD)
            for fd in waker.descriptors { shared.release(fd) }
        }
    }

    // MARK: - Events

    private func dispatch(events: IOEvents, token: UInt64) {
        if token == Self.listenerToken {
            acceptConnections()
            return
        }
        if token == Self.wakeToken {
            waker.drain()
            if shared.shuttingDown.load(ordering: .acquiring), !draining { beginDrain() }
            return
        }
        let fd = Int(token & 0xFFFF_FFFF)
        guard fd < connections.count, let connection = connections[fd], connection.token == token else { return }
        if events.contains(.failed) {
            close(connection)  // reset or fully closed by the peer: drop without a word
            return
        }
        if events.contains(.readable) { readAvailable(connection) }
        if !connection.closed, events.contains(.writable) { writeAndContinue(connection) }
        if !connection.closed { settle(connection) }
    }

    // MARK: - Shutdown

    /// Stops accepting, closes idle connections, and bounds the rest by the shutdown grace period.
    private func beginDrain() {
        draining = true
        if listenFD >= 0 {
            poller.deregister(listenFD)
            shared.release(listenFD)
            listenFD = -1
        }
        for case let connection? in connections where connection.isIdle || connection.lingering {
            close(connection)
        }
        timers.schedule(at: now &+ configuration.timeouts.shutdownGrace.nanosecondsClamped, .shutdownBound)
    }
}
