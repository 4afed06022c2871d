import CEpoll

/// The TLS phase of one loop's connections, between "connected" and "ready": starts each
/// `https` connection's ``TLSSession`` (resuming the host's last session), advances its
/// handshake on the events it asks for, counts full and resumed handshakes, and keeps each
/// host's newest resumable session. The loop performs what it answers; owned by the loop's thread.
final class ClientLoopTLS {
    enum Step: Equatable {
        /// The handshake is done: the connection is ready for its request.
        case ready
        /// Wait for these events, then call ``advance(_:now:)``.
        case wait(IOEvents)
        /// The handshake failed: fail the request with this error and close the connection.
        case failed(HTTPClientError)
    }

    private let shared: ClientTLS
    private var cache: TLSSessionCache?

    init(shared: ClientTLS) { self.shared = shared }

    /// Starts the handshake of a connection to `key`'s host whose TCP connect just completed.
    /// The handshake is timed with the clock read here and when it is done (it may finish
    /// within this call, when the server's answer is already there), not the loop's turn time.
    func start(_ connection: ClientConnection, key: ClientPoolKey) -> Step {
        let context: TLSContext
        switch shared.clientContext() {
        case .success(let made): context = made
        case .failure(let failure): return .failed(.tlsFailed(failure))
        }
        let cache = self.cache ?? TLSSessionCache(lib: context.lib)
        self.cache = cache
        let sessionKey = TLSSessionCache.Key(host: key.host, port: key.port)
        connection.tlsSessionKey = sessionKey
        do {
            connection.tls = try TLSSession(
                context: context, fd: connection.fd, host: key.host, resuming: cache.session(for: sessionKey))
        } catch {
            return .failed(.tlsFailed(error))
        }
        connection.handshaking = true
        connection.handshakeStart = cepoll_monotonic_ns()
        return advance(connection)
    }

    /// Advances the handshake after an event it waited for.
    func advance(_ connection: ClientConnection) -> Step {
        guard let tls = connection.tls else { return .failed(.tlsFailed(TLSFailure(.configuration, "no TLS session"))) }
        switch tls.handshake() {
        case .done:
            connection.handshaking = false
            connection.handshakeNanoseconds = cepoll_monotonic_ns() &- connection.handshakeStart
            if tls.resumed {
                shared.resumedHandshakes.add(1, ordering: .relaxed)
            } else {
                shared.fullHandshakes.add(1, ordering: .relaxed)
            }
            return .ready
        case .wantRead: return .wait(.readable)
        case .wantWrite: return .wait([.readable, .writable])
        case .failed(let failure): return .failed(.tlsFailed(failure))
        }
    }

    /// Keeps the connection's session for the next connection to its host (after a response:
    /// by then a TLS 1.3 server's ticket has arrived).
    func remember(_ connection: ClientConnection) {
        guard let cache, let tls = connection.tls, let key = connection.tlsSessionKey,
            let session = tls.resumableSession()
        else { return }
        cache.store(session, for: key)
    }

    /// Frees the connection's TLS layer before its socket closes, remembering its session when
    /// it carried at least one response.
    func close(_ connection: ClientConnection) {
        guard let tls = connection.tls else { return }
        if connection.served > 0 { remember(connection) }
        tls.free()
        connection.tls = nil
    }
}
