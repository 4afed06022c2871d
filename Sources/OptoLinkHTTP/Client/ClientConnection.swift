import CEpoll

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One outgoing TCP connection, owned by exactly one client loop, and the one place its socket
/// is read, written, connected and probed. The pool's decisions about it live in
/// ``ClientPoolStateMachine``; this type holds only its bytes and its socket.
package final class ClientConnection {
    /// What a non-blocking `connect` reached.
    package enum ConnectStart {
        /// Connected at once.
        case connected
        /// In progress: writable means done (or failed, see ``finishConnect()``).
        case inProgress
        /// Failed with this `errno`.
        case failed(Int32)
    }

    /// What one read brought.
    package enum ReadResult {
        /// This many bytes, now at the start of the buffer given.
        case bytes(Int)
        /// Nothing more for now.
        case wouldBlock
        /// The peer closed its side.
        case endOfInput
        /// The connection broke (`ECONNRESET` and the like).
        case failed
    }

    package let fd: Int32
    package let id: ClientConnectionID
    /// `connect` in progress: the first writable (or failed) readiness completes it.
    var connecting = true
    /// The health of the address it connects to, told of each connect's outcome (``AddressResolver``).
    var addressHealth: AddressHealth?
    package var parser: HTTPResponseParser
    package var output: [UInt8] = []
    var outputOffset = 0
    /// The body held back until `100 Continue` arrives (or the wait for it ends).
    var heldBody: [UInt8]?
    /// The request on this connection, if any.
    package var callId: UInt64?
    /// The interest currently registered with the poller.
    package var interest: IOEvents = []
    /// Requests completed on this connection.
    package var served = 0
    package var closed = false
    /// The TLS layer of an `https` connection; `nil` for plain HTTP.
    package var tls: TLSSession?
    /// Connected, TLS handshake in progress (``tls`` is set): its events go to the handshake.
    var handshaking = false
    /// The host and port whose TLS session this connection resumes and leaves for the next one.
    var tlsSessionKey: TLSSessionCache.Key?
    /// Monotonic nanoseconds when the TLS handshake started, and how long it took once done.
    var handshakeStart: UInt64 = 0
    var handshakeNanoseconds: UInt64 = 0

    /// A new non-blocking stream socket for `family`, or ``HTTPClientError/cannotConnect(errno:)``
    /// when none can be made (`EMFILE` when out of descriptors, …).
    package static func open(
        family: Int32, portable: Bool, id: ClientConnectionID, limits: HTTPResponseParser.Limits
    ) -> Result<ClientConnection, HTTPClientError> {
        let fd = cepoll_stream_socket(family, portable ? 1 : 0)
        guard fd >= 0 else { return .failure(.cannotConnect(errno: cepoll_errno())) }
        return .success(ClientConnection(fd: fd, id: id, limits: limits))
    }

    private init(fd: Int32, id: ClientConnectionID, limits: HTTPResponseParser.Limits) {
        self.fd = fd
        self.id = id
        self.parser = HTTPResponseParser(limits: limits)
    }

    var hasPendingOutput: Bool { outputOffset < output.count }

    /// Starts connecting to `address`.
    package func beginConnect(to address: ClientAddress) -> ConnectStart {
        let rc = address.bytes.withUnsafeBytes { raw in
            connect(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        if rc == 0 { return .connected }
        let code = cepoll_errno()
        return code == EINPROGRESS || code == EINTR ? .inProgress : .failed(code)
    }

    /// The outcome of a `connect` in progress, once the socket is writable: `0` or its `errno`.
    package func finishConnect() -> Int32 {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { code = cepoll_errno() }
        return code
    }

    /// The connection is made: requests go out as soon as they are written (`TCP_NODELAY`).
    func didConnect() {
        connecting = false
        _ = cepoll_enable_option(fd, CEPOLL_IPPROTO_TCP, CEPOLL_TCP_NODELAY)
    }

    /// Reads what arrived into `buffer`: through TLS when the connection has it, from the socket otherwise.
    package func receive(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        if let tls {
            switch tls.read(into: buffer) {
            case .bytes(let n): return .bytes(n)
            case .endOfInput: return .endOfInput
            case .wouldBlock: return .wouldBlock
            case .failed: return .failed
            }
        }
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n > 0 { return .bytes(n) }
            if n == 0 { return .endOfInput }
            let code = cepoll_errno()
            if code == EINTR { continue }
            return code == EAGAIN || code == EWOULDBLOCK ? .wouldBlock : .failed
        }
    }

    /// Writes as much pending output as the socket takes, through TLS when the connection has
    /// it; `false` when the peer is gone.
    package func flush() -> Bool {
        if let tls { return tls.flush(&output, &outputOffset) != .failed }
        return SocketWrite.flush(fd, &output, &outputOffset).0 != .failed
    }

    /// Whether a parked connection can still carry a request: nothing readable on it. The
    /// server may have closed it (end of input), reset it, or sent bytes nobody asked for; each
    /// means a request written now would be lost. One `recv` that peeks and never blocks.
    package func isReusable() -> Bool {
        var byte: UInt8 = 0
        while true {
            let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            if n >= 0 { return false }
            let code = cepoll_errno()
            if code == EINTR { continue }
            return code == EAGAIN || code == EWOULDBLOCK
        }
    }
}
