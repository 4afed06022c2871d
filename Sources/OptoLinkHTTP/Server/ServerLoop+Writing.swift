import CEpoll
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writing and closing: flushes output, keeps each connection's poller interest in step with its
/// state, and closes (in order, lingering, or with a reset).
extension ServerLoop {
    /// Writes as much pending output as the socket takes; closes or lingers when done and closing.
    func flush(_ connection: ServerConnection) {
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
    func settle(_ connection: ServerConnection) {
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
    func reset(_ connection: ServerConnection) {
        counters.resets.wrappingAdd(1, ordering: .relaxed)
        _ = cepoll_set_linger_zero(connection.fd)
        close(connection)
    }

    /// Closes the descriptor exactly once and forgets the connection.
    func close(_ connection: ServerConnection) {
        guard !connection.closed else { return }
        connection.closed = true
        connections[Int(connection.fd)] = nil
        openCount -= 1
        shared.openConnections.wrappingSubtract(1, ordering: .relaxed)
        poller.willClose(connection.fd)
        shared.release(connection.fd)
    }
}
