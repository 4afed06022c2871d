import CEpoll
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reading and answering: reads what a connection sent, parses it, calls the handler and queues
/// the responses in order, with back-pressure on unwritten output.
extension ServerLoop {
    func readAvailable(_ connection: ServerConnection) {
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

    func writeAndContinue(_ connection: ServerConnection) {
        flush(connection)
        guard !connection.closed, connection.pendingOutputCount < Self.outputHighWater else { return }
        drive(connection)
    }

    /// Answers buffered requests and writes, repeating while back-pressure was the only thing
    /// that stopped parsing and the socket has since taken the output.
    func drive(_ connection: ServerConnection) {
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

    func enqueue(
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

    func respondWithError(status: Int, parseError: HTTPParseError?, on connection: ServerConnection) {
        var response = errorRenderer(
            HTTPServerErrorContext(status: status, parseError: parseError, connection: connection.info))
        response.status = status
        connection.closingOnError = true
        enqueue(response, persistence: .close, omitBody: false, on: connection)
    }
}
