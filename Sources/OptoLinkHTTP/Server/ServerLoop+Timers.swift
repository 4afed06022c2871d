import CEpoll
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Timers: each connection's next deadline, the wait timeout, and what happens when a timer fires
/// (idle and request timeouts, delayed responses, resumed accepting, the shutdown bound).
extension ServerLoop {
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
    func armTimer(_ connection: ServerConnection) {
        let due = min(deadline(of: connection), now &+ requestTimeout)
        if due < connection.scheduledDeadline {
            connection.scheduledDeadline = due
            timers.schedule(at: due, .connection(connection.token))
        }
    }

    func connection(for token: UInt64) -> ServerConnection? {
        let fd = Int(token & 0xFFFF_FFFF)
        guard fd < connections.count, let connection = connections[fd], connection.token == token else { return nil }
        return connection
    }

    func waitTimeoutMilliseconds() -> Int32 {
        guard let next = timers.nextDeadline else { return -1 }
        let current = cepoll_monotonic_ns()
        if next <= current { return 0 }
        let milliseconds = (next - current + 999_999) / 1_000_000
        return Int32(min(milliseconds, 60_000))
    }

    func runDueTimers() {
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
    func answerRequestTimeout(_ connection: ServerConnection) {
        counters.recordBadRequest(status: 408)
        connection.requestStart = nil
        respondWithError(status: 408, parseError: nil, on: connection)
        flush(connection)
    }
}
