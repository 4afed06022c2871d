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
    private enum Timer {
        case connection(UInt64)
        case delayedResponse(UInt64)
        case resumeAccepting
        case shutdownBound
    }

    // Computed, not stored: generic types cannot have static stored properties.
    private static var listenerToken: UInt64 { 1 << 63 }
    private static var wakeToken: UInt64 { (1 << 63) | 1 }
    private static var readChunk: Int { 64 * 1024 }
    /// Above this many unwritten bytes a connection stops reading and parsing (back-pressure).
    private static var outputHighWater: Int { 256 * 1024 }

    private let poller: Poller
    private let waker: Waker
    private var listenFD: Int32
    private let configuration: HTTPServer.Configuration
    private let handler: HTTPHandler
    private let errorRenderer: HTTPErrorRenderer
    private let shared: ServerShared
    private let counters: LoopCounters
    private let idleTimeout: UInt64
    private let requestTimeout: UInt64
    private let lingerTimeout: UInt64

    private var connections: [ServerConnection?] = []
    private var openCount = 0
    private var generation: UInt64 = 0
    private var timers = TimerHeap<Timer>()
    private var now: UInt64
    private var draining = false
    private var acceptPaused = false
    private var dateHeader = HTTPDateHeader()
    private let readBuffer: UnsafeMutableRawBufferPointer

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

    private func acceptConnections() {
        for _ in 0..<128 {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    cepoll_accept(listenFD, $0, &length, Poller.usesPortableCalls ? 1 : 0)
                }
            }
            if fd < 0 {
                switch cepoll_errno() {
                case EINTR, ECONNABORTED: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM: pauseAccepting()
                default: break
                }
                return
            }
            shared.track(fd)
            counters.accepted.wrappingAdd(1, ordering: .relaxed)
            let open = shared.openConnections.wrappingAdd(1, ordering: .relaxed).newValue
            if draining || (open > configuration.maxConnections && !reclaimConnection()) {
                shared.openConnections.wrappingSubtract(1, ordering: .relaxed)
                counters.rejected.wrappingAdd(1, ordering: .relaxed)
                shared.release(fd)
                continue
            }
            _ = cepoll_enable_option(fd, CEPOLL_IPPROTO_TCP, CEPOLL_TCP_NODELAY)
            let peer = ListeningSocket.describe(storage)
            let id = shared.nextConnectionId.wrappingAdd(1, ordering: .relaxed).newValue
            generation = (generation &+ 1) & 0x7FFF_FFFF
            let token = (generation << 32) | UInt64(UInt32(fd))
            let connection = ServerConnection(
                fd: fd, token: token,
                info: HTTPConnectionInfo(peerAddress: peer.address, peerPort: peer.port, connectionId: id),
                limits: configuration.limits, interest: .readable, now: now)
            guard poller.register(fd, interest: .readable, token: token) else {
                shared.openConnections.wrappingSubtract(1, ordering: .relaxed)
                shared.release(fd)
                continue
            }
            if Int(fd) >= connections.count {
                connections.append(contentsOf: repeatElement(nil, count: Int(fd) + 1 - connections.count))
            }
            connections[Int(fd)] = connection
            openCount += 1
            armTimer(connection)
        }
    }

    /// At the connection cap: frees one slot of this loop so a new client is served instead of refused.
    ///
    /// One scan finds both candidates. First choice: the longest-idle connection (no request in
    /// progress, nothing to write; silent connections count as idle), closed without a word. Else
    /// the connection that has spent the longest on one unfinished request it is still *receiving*
    /// (partial head, or a body that trickles or stalls; see ``Connection/isReceivingRequest``): it
    /// is answered 408 exactly as its request timeout would answer it, then closed. Ranked by
    /// `requestStart`, not `lastActivity`: a slowloris that sends one byte every few seconds always
    /// looks recently active, yet it has been on the same request the longest, and it is the one
    /// whose 408 was due first anyway. A connection whose complete request is with the handler
    /// (delayed response), whose response is being written, or that is closing, is never taken.
    ///
    /// - Returns: `false` when no connection of this loop can be taken (the new one is refused).
    private func reclaimConnection() -> Bool {
        var idle: ServerConnection?
        var stalled: ServerConnection?
        // Ties (bytes read in the same loop iteration) go to the connection accepted first.
        for case let connection? in connections where !connection.lingering {
            let id = connection.info.connectionId
            if connection.isIdle, connection.requestStart == nil {
                if let current = idle,
                    (current.lastActivity, current.info.connectionId) <= (connection.lastActivity, id)
                {
                    continue
                }
                idle = connection
            } else if idle == nil, connection.isReceivingRequest, let start = connection.requestStart {
                if let current = stalled, let since = current.requestStart,
                    (since, current.info.connectionId) <= (start, id)
                {
                    continue
                }
                stalled = connection
            }
        }
        if let idle {
            counters.reclaimed.wrappingAdd(1, ordering: .relaxed)
            close(idle)
            return true
        }
        guard let stalled else { return false }
        counters.reclaimedMidRequest.wrappingAdd(1, ordering: .relaxed)
        answerRequestTimeout(stalled)
        // The slot is needed now, so no lingering close: drop what the client sent since the last
        // read (a close with unread input would be a reset that can destroy the 408), then close.
        discardUnreadInput(stalled)
        close(stalled)
        return true
    }

    /// Reads and drops whatever the client has sent that the loop has not read yet (at most 1 MiB).
    private func discardUnreadInput(_ connection: ServerConnection) {
        guard !connection.closed else { return }
        for _ in 0..<16 {
            let n = read(connection.fd, readBuffer.baseAddress, readBuffer.count)
            if n > 0 { continue }
            if n < 0, cepoll_errno() == EINTR { continue }
            return
        }
    }

    /// Out of descriptors or memory: stop polling the listener for 100 ms instead of spinning on it.
    private func pauseAccepting() {
        guard !acceptPaused, listenFD >= 0 else { return }
        acceptPaused = true
        poller.deregister(listenFD)
        timers.schedule(at: now + 100_000_000, .resumeAccepting)
    }

    private func readAvailable(_ connection: ServerConnection) {
        var reads = 0
        while reads < 4 {
            let n = read(connection.fd, readBuffer.baseAddress, readBuffer.count)
            if n > 0 {
                reads += 1
                connection.lastActivity = now
                connection.receivedAny = true
                if connection.lingering { continue }
                if connection.parser.isIdle, connection.requestStart == nil { connection.requestStart = now }
                connection.parser.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<n]))
                if n < readBuffer.count { break }
            } else if n == 0 {
                connection.peerClosedInput = true
                break
            } else {
                let error = cepoll_errno()
                if error == EINTR { continue }
                if error == EAGAIN || error == EWOULDBLOCK { break }
                close(connection)  // ECONNRESET and friends: the client went away mid-request
                return
            }
        }
        if connection.lingering {
            if connection.peerClosedInput { close(connection) }
            return
        }
        drive(connection)
    }

    private func writeAndContinue(_ connection: ServerConnection) {
        flush(connection)
        guard !connection.closed, connection.pendingOutputCount < Self.outputHighWater else { return }
        drive(connection)
    }

    /// Answers buffered requests and writes, repeating while back-pressure was the only thing
    /// that stopped parsing and the socket has since taken the output.
    private func drive(_ connection: ServerConnection) {
        while true {
            let blockedByOutput = processRequests(connection)
            if connection.closed { return }
            flush(connection)
            guard blockedByOutput, !connection.closed, connection.pendingOutputCount < Self.outputHighWater else {
                return
            }
        }
    }

    // MARK: - Requests

    /// Parses and answers buffered requests in order until one is delayed, the connection is
    /// closing, more bytes are needed, or too much output is waiting.
    ///
    /// - Returns: `true` when it stopped only because too much output was waiting.
    @discardableResult
    private func processRequests(_ connection: ServerConnection) -> Bool {
        var needsInput = false
        while connection.delayed == nil, !connection.closeAfterWrite, !connection.lingering,
            connection.pendingOutputCount < Self.outputHighWater
        {
            guard let output = connection.parser.next() else {
                needsInput = true
                break
            }
            switch output {
            case .failure(let error):
                counters.recordBadRequest(status: error.status)
                respondWithError(status: error.status, parseError: error, on: connection)
            case .request(let request, let keepAlive):
                counters.requests.wrappingAdd(1, ordering: .relaxed)
                connection.requestStart = nil
                let persistence: HTTPResponseSerializer.Persistence =
                    !keepAlive || draining
                    ? .close : (request.version == "HTTP/1.0" ? .keepAliveHTTP10 : .keepAlive)
                let omitBody = request.method == "HEAD"
                switch handler(request, connection.info) {
                case .respond(let response):
                    enqueue(response, persistence: persistence, omitBody: omitBody, on: connection)
                case .respondAfter(let response, let delay):
                    connection.delayed = .init(response: response, persistence: persistence, omitBody: omitBody)
                    timers.schedule(at: now &+ delay.nanosecondsClamped, .delayedResponse(connection.token))
                case .reset:
                    reset(connection)
                    return false
                case .close:
                    counters.closedWithoutResponse.wrappingAdd(1, ordering: .relaxed)
                    connection.closeAfterWrite = true
                }
            }
        }
        let blockedByOutput =
            connection.pendingOutputCount >= Self.outputHighWater && connection.delayed == nil
            && !connection.closeAfterWrite
        if connection.parser.isAwaitingContinue, !connection.closeAfterWrite, connection.delayed == nil {
            if !connection.hasPendingOutput { connection.lastWriteProgress = now }
            connection.output.append(contentsOf: HTTPResponseSerializer.continueResponse)
            connection.parser.continueSent()
        }
        if connection.requestStart == nil, !connection.parser.isIdle { connection.requestStart = now }
        if connection.peerClosedInput, needsInput, !connection.closeAfterWrite {
            // The client sent FIN and every complete request is answered; a partial one can never complete.
            connection.closeAfterWrite = true
        }
        return blockedByOutput
    }

    private func enqueue(
        _ response: HTTPResponse, persistence: HTTPResponseSerializer.Persistence, omitBody: Bool,
        on connection: ServerConnection
    ) {
        let persistence = draining ? .close : persistence
        if !connection.hasPendingOutput { connection.lastWriteProgress = now }
        HTTPResponseSerializer.serialize(
            response, persistence: persistence, omitBody: omitBody, dateHeader: dateHeader.current(),
            into: &connection.output)
        if persistence == .close { connection.closeAfterWrite = true }
    }

    private func respondWithError(status: Int, parseError: HTTPParseError?, on connection: ServerConnection) {
        var response = errorRenderer(
            HTTPServerErrorContext(status: status, parseError: parseError, connection: connection.info))
        response.status = status
        connection.closingOnError = true
        enqueue(response, persistence: .close, omitBody: false, on: connection)
    }

    // MARK: - Writing and closing

    /// Writes as much pending output as the socket takes; closes or lingers when done and closing.
    private func flush(_ connection: ServerConnection) {
        let (outcome, wrote) = SocketWrite.flush(connection.fd, &connection.output, &connection.outputOffset)
        if wrote { connection.lastWriteProgress = now }
        switch outcome {
        case .done: break
        case .wouldBlock: return
        case .failed:
            close(connection)  // EPIPE / ECONNRESET: the client is gone
            return
        }
        if draining, connection.isIdle { connection.closeAfterWrite = true }
        if connection.closeAfterWrite, connection.delayed == nil, !connection.lingering {
            let unreadInputLikely = connection.closingOnError || !connection.parser.isIdle
            if connection.peerClosedInput || lingerTimeout == 0 || !unreadInputLikely {
                close(connection)
            } else {
                // Lingering close: stop writing, keep draining input briefly so unread request
                // bytes do not turn our close into a reset that destroys the response in flight.
                shutdown(connection.fd, Int32(SHUT_WR))
                connection.lingering = true
                connection.lingerDeadline = now &+ lingerTimeout
            }
        }
    }

    /// Re-registers the interest the connection's state calls for, and makes sure a timer covers it.
    private func settle(_ connection: ServerConnection) {
        var wanted: IOEvents = []
        if connection.lingering {
            wanted = .readable
        } else {
            if !connection.peerClosedInput, connection.delayed == nil, !connection.closeAfterWrite,
                connection.pendingOutputCount < Self.outputHighWater
            {
                wanted.insert(.readable)
            }
            if connection.hasPendingOutput { wanted.insert(.writable) }
        }
        if wanted != connection.interest {
            connection.interest = wanted
            poller.update(connection.fd, interest: wanted, token: connection.token)
        }
        armTimer(connection)
    }

    /// Aborts with a TCP reset (SO_LINGER 0 then close): the client sees ECONNRESET.
    private func reset(_ connection: ServerConnection) {
        counters.resets.wrappingAdd(1, ordering: .relaxed)
        _ = cepoll_set_linger_zero(connection.fd)
        close(connection)
    }

    /// Closes the descriptor exactly once and forgets the connection.
    private func close(_ connection: ServerConnection) {
        guard !connection.closed else { return }
        connection.closed = true
        connections[Int(connection.fd)] = nil
        openCount -= 1
        shared.openConnections.wrappingSubtract(1, ordering: .relaxed)
        poller.willClose(connection.fd)
        shared.release(connection.fd)
    }

    // MARK: - Timers

    /// When this connection next needs attention: linger end, write stall, slow request, or idle timeout.
    private func deadline(of connection: ServerConnection) -> UInt64 {
        if connection.lingering { return connection.lingerDeadline }
        if connection.hasPendingOutput { return connection.lastWriteProgress &+ requestTimeout }
        if connection.delayed != nil { return .max }
        if let start = connection.requestStart { return start &+ requestTimeout }
        // A connection that never sent a byte gets the request timeout, not the (longer) idle one.
        if !connection.receivedAny { return connection.lastActivity &+ min(idleTimeout, requestTimeout) }
        return connection.lastActivity &+ idleTimeout
    }

    /// Makes sure the heap holds an entry for this connection no later than its deadline.
    ///
    /// The entry is placed at most one request timeout ahead, so a later move from idle to
    /// "request in progress" (deadline: first byte + request timeout) never needs an earlier
    /// entry: the common keep-alive cycle pushes nothing, and the heap holds about one entry per
    /// connection instead of one per request.
    private func armTimer(_ connection: ServerConnection) {
        let due = min(deadline(of: connection), now &+ requestTimeout)
        if due < connection.scheduledDeadline {
            connection.scheduledDeadline = due
            timers.schedule(at: due, .connection(connection.token))
        }
    }

    private func connection(for token: UInt64) -> ServerConnection? {
        let fd = Int(token & 0xFFFF_FFFF)
        guard fd < connections.count, let connection = connections[fd], connection.token == token else { return nil }
        return connection
    }

    private func waitTimeoutMilliseconds() -> Int32 {
        guard let next = timers.nextDeadline else { return -1 }
        let current = cepoll_monotonic_ns()
        if next <= current { return 0 }
        let milliseconds = (next - current + 999_999) / 1_000_000
        return Int32(min(milliseconds, 60_000))
    }

    private func runDueTimers() {
        while let entry = timers.popDue(now: now) {
            switch entry.payload {
            case .connection(let token):
                guard let connection = connection(for: token), connection.scheduledDeadline == entry.deadline else {
                    continue  // stale entry: the connection is gone or rescheduled earlier
                }
                connection.scheduledDeadline = .max
                if deadline(of: connection) <= now { timeOut(connection) }
                if !connection.closed { settle(connection) }
            case .delayedResponse(let token):
                guard let connection = connection(for: token), let delayed = connection.delayed else { continue }
                connection.delayed = nil
                enqueue(delayed.response, persistence: delayed.persistence, omitBody: delayed.omitBody, on: connection)
                drive(connection)
                if !connection.closed { settle(connection) }
            case .resumeAccepting:
                acceptPaused = false
                if !draining, listenFD >= 0 {
                    _ = poller.register(listenFD, interest: .readable, token: Self.listenerToken)
                }
            case .shutdownBound:
                for case let connection? in connections { close(connection) }
            }
        }
    }

    private func timeOut(_ connection: ServerConnection) {
        if connection.lingering {
            close(connection)
        } else if connection.hasPendingOutput {
            counters.requestTimeouts.wrappingAdd(1, ordering: .relaxed)
            close(connection)  // the client stopped reading
        } else if connection.requestStart != nil {
            counters.requestTimeouts.wrappingAdd(1, ordering: .relaxed)
            answerRequestTimeout(connection)
        } else if !connection.receivedAny {
            counters.requestTimeouts.wrappingAdd(1, ordering: .relaxed)
            close(connection)  // silent since accept: nothing to answer
        } else {
            counters.idleTimeouts.wrappingAdd(1, ordering: .relaxed)
            close(connection)
        }
    }

    /// The one 408 path: a request that did not arrive in time is answered through the error
    /// renderer (`Connection: close`) and written at once; used by the request timeout and by a
    /// reclaim at the connection cap.
    private func answerRequestTimeout(_ connection: ServerConnection) {
        counters.recordBadRequest(status: 408)
        connection.requestStart = nil
        respondWithError(status: 408, parseError: nil, on: connection)
        flush(connection)
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
