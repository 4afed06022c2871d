/// One accepted TCP connection, owned by exactly one server loop (never shared across threads).
final class ServerConnection {
    /// A response the handler asked to send later (``HTTPHandlerResult/respondAfter(_:delay:)``).
    struct DelayedResponse {
        var response: HTTPResponse
        var persistence: HTTPResponseSerializer.Persistence
        var omitBody: Bool
    }

    let fd: Int32
    /// `fd` plus a per-loop generation: tells a recycled descriptor number from this connection.
    let token: UInt64
    let info: HTTPConnectionInfo
    var parser: HTTPRequestParser

    /// Serialized responses not yet written; bytes before `outputOffset` are already sent.
    var output: [UInt8] = []
    var outputOffset = 0
    /// The readiness currently registered with the loop's poller.
    var interest: IOEvents
    var delayed: DelayedResponse?
    /// No further request is processed; close once `output` is written.
    var closeAfterWrite = false
    /// The server answered an error of its own: the client may still be sending, so close lingering.
    var closingOnError = false
    /// Our side is shut down for writing; reading and discarding until EOF or `lingerDeadline`.
    var lingering = false
    var lingerDeadline: UInt64 = 0
    /// The client sent FIN: answer what was received, then close.
    var peerClosedInput = false
    var closed = false

    /// At least one byte arrived since accept (a silent connection gets the request timeout).
    var receivedAny = false
    /// Monotonic nanoseconds of the last byte received (of the accept, before any byte).
    var lastActivity: UInt64
    /// Monotonic nanoseconds of the last successful write (or when output became pending).
    var lastWriteProgress: UInt64
    /// Monotonic nanoseconds of the first byte of the request now in progress, if any.
    var requestStart: UInt64?
    /// The deadline of this connection's live entry in the loop's timer heap (`.max` when none).
    var scheduledDeadline: UInt64 = .max

    init(
        fd: Int32, token: UInt64, info: HTTPConnectionInfo, limits: HTTPRequestParser.Limits, interest: IOEvents,
        now: UInt64
    ) {
        self.fd = fd
        self.token = token
        self.info = info
        self.parser = HTTPRequestParser(limits: limits)
        self.interest = interest
        self.lastActivity = now
        self.lastWriteProgress = now
    }

    var hasPendingOutput: Bool { outputOffset < output.count }
    var pendingOutputCount: Int { output.count - outputOffset }

    /// No request in progress, nothing to write, nothing scheduled: safe to close on shutdown.
    var isIdle: Bool { parser.isIdle && !hasPendingOutput && delayed == nil }

    /// Still receiving a request: the parser holds bytes of an unfinished one (head or body), and
    /// nothing else is under way (no complete request with the handler, no response being written,
    /// not closing). Such a connection may be answered 408 and reclaimed at the connection cap.
    var isReceivingRequest: Bool {
        requestStart != nil && !parser.isIdle && delayed == nil && !hasPendingOutput && !closeAfterWrite
            && !lingering
    }
}
