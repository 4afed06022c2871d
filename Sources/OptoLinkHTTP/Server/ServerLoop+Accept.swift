import CEpoll
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Accepting: takes new connections off the listener, frees a slot at the connection cap, and
/// backs off when the process runs out of descriptors.
extension ServerLoop {
    func acceptConnections() {
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
}
