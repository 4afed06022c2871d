import CEpoll

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One outgoing TCP connection, owned by exactly one client loop.
final class ClientConnection {
    enum Phase {
        /// `connect` in progress; writable means done (or failed, see `SO_ERROR`).
        case connecting
        /// Connected, TLS handshake in progress (``tls`` is set); its events go to the handshake.
        case handshaking
        /// A request is on the wire or its response is arriving.
        case busy
        /// Connected, no request: waits in its pool's idle list.
        case idle
    }

    let fd: Int32
    /// `fd` plus a per-loop generation: tells a recycled descriptor number from this connection.
    let token: UInt64
    let pool: ClientPoolKey
    var phase = Phase.connecting
    var parser: HTTPResponseParser
    var output: [UInt8] = []
    var outputOffset = 0
    /// The body held back until `100 Continue` arrives (or the wait for it ends).
    var heldBody: [UInt8]?
    /// The request on this connection, if any.
    var callId: UInt64?
    /// The interest currently registered with the poller.
    var interest: IOEvents = []
    /// Monotonic nanoseconds when this connection last finished a request (for the idle timeout).
    var idleSince: UInt64 = 0
    /// Requests completed on this connection.
    var served = 0
    var closed = false
    /// The TLS layer of an `https` connection; `nil` for plain HTTP.
    var tls: TLSSession?
    /// Monotonic nanoseconds when the TLS handshake started, and how long it took once done.
    var handshakeStart: UInt64 = 0
    var handshakeNanoseconds: UInt64 = 0

    init(fd: Int32, token: UInt64, pool: ClientPoolKey, limits: HTTPResponseParser.Limits) {
        self.fd = fd
        self.token = token
        self.pool = pool
        self.parser = HTTPResponseParser(limits: limits)
    }

    var hasPendingOutput: Bool { outputOffset < output.count }

    /// Reads what arrived: through TLS when the connection has it, from the socket otherwise.
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> TLSSession.ReadResult {
        if let tls { return tls.read(into: buffer) }
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n > 0 { return .bytes(n) }
            if n == 0 { return .endOfInput }
            let code = cepoll_errno()
            if code == EINTR { continue }
            return code == EAGAIN || code == EWOULDBLOCK ? .wouldBlock : .failed
        }
    }

    /// Writes pending output, through TLS when the connection has it.
    func flushOutput() -> SocketWrite.Outcome {
        if let tls { return tls.flush(&output, &outputOffset) }
        return SocketWrite.flush(fd, &output, &outputOffset).0
    }
}

/// Which pool a request belongs to: one per host and port, and per partition in the per-partition mode.
struct ClientPoolKey: Hashable, Sendable {
    var host: String
    var port: Int
    var partition: String?
    /// `https`: connections of this pool speak TLS.
    var usesTLS = false
}

/// The connections of one pool on one loop, and the requests waiting for one of them.
/// A class, so taking and returning a connection mutates its lists in place (a struct copied out
/// of the loop's dictionary would copy them on every request).
final class ClientPool {
    /// Most connections this pool may hold open at once.
    let limit: Int
    /// Open connections (connecting, busy or idle).
    var open = 0
    /// Idle connections by token, most recently used last (reused first: its socket is warmest).
    var idle: [UInt64] = []
    /// Requests waiting for a connection, in arrival order; entries before `head` are taken.
    var waiting: [UInt64] = []
    var head = 0

    init(limit: Int) { self.limit = limit }

    var hasWaiting: Bool { head < waiting.count }

    func enqueue(_ id: UInt64) { waiting.append(id) }

    func dequeue() -> UInt64? {
        guard head < waiting.count else { return nil }
        let id = waiting[head]
        head += 1
        if head == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024, head * 2 >= waiting.count {
            waiting.removeSubrange(0..<head)
            head = 0
        }
        return id
    }
}
