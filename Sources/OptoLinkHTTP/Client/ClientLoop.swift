import CEpoll
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One client event loop on its own thread, the executor of its ``ClientPoolStateMachine``:
/// it turns readiness, commands and timers into the machine's events and performs the actions
/// that come back (connect, write, fail, close, park), parsing responses and enforcing
/// deadlines on the way. Generic over the same readiness backends as the server's loop
/// (``EpollPoller`` on Linux, ``PollPoller`` anywhere).
///
/// Everything here is touched only by the loop's thread. Callers reach it through
/// ``ClientLoopShared`` (a locked inbox plus the wake-up channel); results go back through each
/// request's ``ClientCall``. The inbox also carries the jobs of tasks that prefer this loop as
/// their executor; the loop runs them in order with the commands, after each readiness turn.
/// A request is sent at most once: a failure is reported, never retried.
final class ClientLoop<Poller: ReadinessPoller> {
    private struct Job {
        var call: ClientCall
        /// Taken (moved out) when it is written: a request is sent once, and the job keeps only
        /// what is still needed to finish it.
        var request: HTTPClientRequest?
        /// The host's addresses, tried in turn while a connection for it is refused.
        var addresses: [ClientAddress]
    }

    private enum Timer {
        case deadline(UInt64)
        case idle(ClientConnectionID)
        case continueWait(ClientConnectionID)
    }

    private static var wakeToken: UInt64 { 1 << 63 }
    private static var readChunk: Int { 64 * 1024 }

    private let poller: Poller
    private let shared: ClientLoopShared
    private let configuration: HTTPClient.Configuration
    private let portable: Bool
    private var machine: ClientPoolStateMachine
    /// Open connections by their slot (``ClientConnectionID/slot``).
    private var connections: [ClientConnection?] = []
    private var jobs: [UInt64: Job] = [:]
    private var timers = TimerHeap<Timer>()
    private var now: UInt64
    private let readBuffer: UnsafeMutableRawBufferPointer
    /// The empty buffer ``processInbox()`` trades with the inbox's on each turn.
    private var inboxBatch: [ClientCommand] = []
    private let tls: ClientLoopTLS

    init(
        poller: Poller, shared: ClientLoopShared, configuration: HTTPClient.Configuration, poolLimit: Int,
        tls: ClientTLS
    ) {
        self.poller = poller
        self.tls = ClientLoopTLS(shared: tls)
        self.shared = shared
        self.configuration = configuration
        self.portable = Poller.usesPortableCalls
        machine = ClientPoolStateMachine(
            poolLimit: poolLimit, idleTimeout: configuration.idleTimeout.nanosecondsClamped)
        now = cepoll_monotonic_ns()
        readBuffer = .allocate(byteCount: Self.readChunk, alignment: 16)
    }

    deinit { readBuffer.deallocate() }

    /// Runs until the client shuts down; then fails what is pending and closes every connection.
    func run() {
        _ = poller.register(shared.waker.readFD, interest: .readable, token: Self.wakeToken)
        while !shared.stopping.load(ordering: .acquiring) {
            let mayBlock = shared.park()
            let count = poller.wait(timeoutMilliseconds: mayBlock ? waitTimeoutMilliseconds() : 0)
            shared.unpark()
            now = cepoll_monotonic_ns()
            if count < 0 {
                if cepoll_errno() == EINTR { continue }
                break
            }
            for index in 0..<count {
                let (events, token) = poller.ready(at: index)
                if token == Self.wakeToken {
                    shared.waker.drain()
                } else {
                    handle(events, on: ClientConnectionID(rawValue: token))
                }
            }
            if shared.hasQueued { processInbox() }
            runDueTimers()
        }
        var remaining: [ClientCommand] = []
        shared.takeAll(into: &remaining, closing: true)
        for command in remaining {
            switch command {
            case .submit(let call, _, _, _): call.finish(.failure(.shutDown))
            case .run(let job): globalConcurrentExecutor.enqueue(job)
            case .cancel: break
            }
        }
        let (failed, closed) = machine.shutdown()
        for id in failed { jobs[id]?.call.finish(.failure(.shutDown)) }
        for job in jobs.values { job.call.finish(.failure(.shutDown)) }
        jobs.removeAll()
        for id in closed { closeSocket(id) }
        for case let connection? in connections { closeSocket(connection.id) }
        poller.deregister(shared.waker.readFD)
        if shared.closeWakerOnExit.load(ordering: .acquiring) { shared.closeWaker() }
    }

    // MARK: - Commands

    /// Runs the commands queued so far, in posting order. Each is moved out of the batch (reversed,
    /// then taken from its end), not copied out and destroyed again with the batch; the batch's
    /// buffer is kept for the next turn.
    private func processInbox() {
        var batch: [ClientCommand] = []
        swap(&batch, &inboxBatch)
        shared.takeAll(into: &batch)
        batch.reverse()
        while let command = batch.popLast() {
            switch consume command {
            case .submit(let call, let request, let deadline, let addresses):
                submit(call, request, deadline: deadline, addresses: addresses)
            case .cancel(let id):
                perform(machine.requestEnded(id, error: .cancelled))
            case .run(let job):
                shared.runJob(job)
            }
        }
        swap(&batch, &inboxBatch)
    }

    private func submit(
        _ call: ClientCall, _ request: consuming HTTPClientRequest, deadline: UInt64, addresses: [ClientAddress]
    ) {
        guard !call.isFinished else { return }  // cancelled before the loop saw it
        guard deadline > now else {
            call.finish(.failure(.timedOut))
            return
        }
        let partition = configuration.poolMode == .perPartition ? request.partition : nil
        let key = ClientPoolKey(
            host: request.host, port: request.port, partition: partition, source: request.sourceAddress,
            usesTLS: request.usesTLS)
        jobs[call.id] = Job(call: call, request: consume request, addresses: addresses)
        timers.schedule(at: deadline, .deadline(call.id))
        perform(machine.submit(call.id, key: key, addressCount: addresses.count))
    }

    // MARK: - Actions

    /// Performs what the pool machine decided: fails a request, closes a connection, then takes
    /// the next step (which may report further events).
    private func perform(_ actions: ClientPoolActions) {
        if let failure = actions.fail, let job = jobs.removeValue(forKey: failure.request) {
            job.call.finish(.failure(failure.error))
        }
        if let id = actions.close {
            // An address that let a request's deadline pass without accepting has stopped answering.
            if actions.fail?.error == .timedOut, let connection = connection(id), connection.connecting {
                connection.addressHealth?.connectFailed(at: now)
            }
            closeSocket(id)
        }
        switch actions.next {
        case .none:
            break
        case .connect(let id, let key, let addressIndex, let request):
            openConnection(id, key: key, addressIndex: addressIndex, for: request)
        case .write(let request, let id, let reused):
            write(request, on: id, reused: reused)
        case .park(let id, let idleTimerAt):
            if let idleTimerAt { timers.schedule(at: idleTimerAt, .idle(id)) }
            if let connection = connection(id) { settle(connection) }
        case .scheduleIdleTimer(let id, let at):
            timers.schedule(at: at, .idle(id))
        }
    }

    private func openConnection(
        _ id: ClientConnectionID, key: ClientPoolKey, addressIndex: Int, for request: UInt64
    ) {
        guard let address = jobs[request]?.addresses[addressIndex] else { return }
        let connection: ClientConnection
        switch ClientConnection.open(
            family: address.family, portable: portable, id: id, limits: configuration.responseLimits)
        {
        case .success(let opened): connection = opened
        case .failure(let error):
            perform(machine.connectFailed(id, error: error, mayTryNextAddress: false))
            return
        }
        if id.slot >= connections.count {
            connections.append(contentsOf: repeatElement(nil, count: id.slot + 1 - connections.count))
        }
        connections[id.slot] = connection
        connection.addressHealth = address.health
        if let source = key.source, let code = HTTPSourceAddress.bind(connection.fd, to: source) {
            // Every address of the host would fail alike: no next address.
            perform(machine.connectFailed(id, error: .cannotConnect(errno: code), mayTryNextAddress: false))
            return
        }
        let start = connection.beginConnect(to: address)
        if case .failed(let code) = start {
            connectFailed(connection, errno: code)
            return
        }
        connection.interest = .writable
        guard poller.register(connection.fd, interest: .writable, token: id.rawValue) else {
            connectFailed(connection, errno: cepoll_errno())
            return
        }
        if case .connected = start { connected(connection) }
    }

    private func connectFailed(_ connection: ClientConnection, errno code: Int32) {
        connection.addressHealth?.connectFailed(at: now)
        let error: HTTPClientError = code == ECONNREFUSED ? .connectionRefused : .cannotConnect(errno: code)
        perform(machine.connectFailed(connection.id, error: error))
    }

    private func connected(_ connection: ClientConnection) {
        connection.didConnect()
        connection.addressHealth?.connected()
        if let key = machine.key(of: connection.id), key.usesTLS {
            handshake(connection, tls.start(connection, key: key))
            return
        }
        perform(machine.connected(connection.id, now: now))
    }

    /// Performs a step of a connection's TLS handshake; the pool sees the connection as
    /// connecting until the handshake is done.
    private func handshake(_ connection: ClientConnection, _ step: ClientLoopTLS.Step) {
        switch step {
        case .ready:
            perform(machine.connected(connection.id, now: now))
        case .wait(let wanted):
            if wanted != connection.interest {
                connection.interest = wanted
                poller.update(connection.fd, interest: wanted, token: connection.id.rawValue)
            }
        case .failed(let error):
            // The host's other addresses serve the same certificate: no next address.
            perform(machine.connectFailed(connection.id, error: error, mayTryNextAddress: false))
        }
    }

    /// Writes a request on a connection; a reused one is checked first, and when the server has
    /// closed it the request (not sent) goes to another connection.
    private func write(_ id: UInt64, on connectionID: ClientConnectionID, reused: Bool) {
        guard let connection = connection(connectionID) else { return }
        if reused && !connection.isReusable() {
            perform(machine.staleConnection(connectionID))
            return
        }
        // Optional chaining through the subscript mutates the job in place (no copy out and back).
        guard let request = jobs[id]?.request.take() else { return }
        connection.callId = id
        HTTPRequestSerializer.serializeHead(
            method: request.method, target: request.target, host: request.host, port: request.port,
            headers: request.headers, bodyLength: request.body.count, into: &connection.output)
        if request.expectsContinue {
            connection.heldBody = request.body
            timers.schedule(
                at: now &+ configuration.continueTimeout.nanosecondsClamped, .continueWait(connection.id))
        } else {
            connection.output.append(contentsOf: request.body)
        }
        connection.parser.expectResponse(toHEAD: request.method == "HEAD")
        flush(connection)
        if !connection.closed { settle(connection) }
    }

    private func lost(_ connection: ClientConnection, _ error: HTTPClientError) {
        connection.callId = nil
        perform(machine.connectionLost(connection.id, error: error))
    }

    private func closeSocket(_ id: ClientConnectionID) {
        guard let connection = connection(id), !connection.closed else { return }
        connection.closed = true
        tls.close(connection)
        connections[id.slot] = nil
        poller.willClose(connection.fd)
        close(connection.fd)
    }

    private func connection(_ id: ClientConnectionID) -> ClientConnection? {
        let slot = id.slot
        guard slot < connections.count, let connection = connections[slot], connection.id == id else { return nil }
        return connection
    }

    // MARK: - I/O

    private func handle(_ events: IOEvents, on id: ClientConnectionID) {
        guard let connection = connection(id) else { return }
        if connection.connecting {
            guard events.contains(.writable) || events.contains(.failed) else { return }
            let code = connection.finishConnect()
            if code != 0 {
                connectFailed(connection, errno: code)
            } else {
                connected(connection)
            }
            return
        }
        if connection.handshaking {
            handshake(connection, tls.advance(connection))
            return
        }
        if events.contains(.readable) || events.contains(.failed) { readAvailable(connection) }
        if !connection.closed, events.contains(.writable) {
            flush(connection)
            if !connection.closed { settle(connection) }
        }
    }

    private func readAvailable(_ connection: ClientConnection) {
        for _ in 0..<4 {
            switch connection.receive(into: readBuffer) {
            case .bytes(let n):
                guard connection.callId != nil else {
                    lost(connection, .connectionClosed)  // bytes nobody asked for: the connection cannot be trusted
                    return
                }
                connection.parser.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<n]))
                guard takeResponses(connection) else { return }
                if n < readBuffer.count { return }
            case .endOfInput:
                endOfInput(connection)
                return
            case .wouldBlock:
                return
            case .failed:
                lost(connection, .connectionReset)
                return
            }
        }
    }

    /// Parses what arrived; `false` once the connection was released or closed.
    private func takeResponses(_ connection: ClientConnection) -> Bool {
        while let output = connection.parser.next() {
            switch output {
            case .informational(let status, _):
                if status == 100, let body = connection.heldBody { sendHeldBody(body, on: connection) }
                if connection.closed { return false }
            case .response(let response, let keepAlive):
                // A final answer before the held body went out: the server's view of the stream is unclear.
                let reusable = keepAlive && connection.heldBody == nil && connection.parser.isIdle
                connection.heldBody = nil
                complete(connection, with: response, reusable: reusable)
                return false
            case .failure(let error):
                lost(connection, .badResponse(error))
                return false
            }
        }
        return true
    }

    private func endOfInput(_ connection: ClientConnection) {
        guard connection.callId != nil else {
            lost(connection, .connectionClosed)  // the server closed an idle keep-alive connection
            return
        }
        switch connection.parser.finish() {
        case .response(let response, _)?:
            complete(connection, with: response, reusable: false)
        case .failure(.truncated)?, nil, .informational?:
            lost(connection, .connectionClosed)
        case .failure(let error)?:
            lost(connection, .badResponse(error))
        }
    }

    private func complete(_ connection: ClientConnection, with response: HTTPClientResponse, reusable: Bool) {
        if let id = connection.callId, let job = jobs.removeValue(forKey: id) {
            var response = response
            if connection.served == 0, connection.tls != nil {
                response.tlsHandshakeNanoseconds = connection.handshakeNanoseconds
            }
            job.call.finish(.success(response))
        }
        connection.callId = nil
        connection.served += 1
        if connection.served == 1 { tls.remember(connection) }
        let reuse = reusable && !shared.stopping.load(ordering: .relaxed)
        perform(machine.responseReceived(on: connection.id, reusable: reuse, now: now))
    }

    private func sendHeldBody(_ body: [UInt8], on connection: ClientConnection) {
        connection.heldBody = nil
        connection.output.append(contentsOf: body)
        flush(connection)
        if !connection.closed { settle(connection) }
    }

    /// Writes as much pending output as the socket takes.
    private func flush(_ connection: ClientConnection) {
        if !connection.flush() { lost(connection, .connectionReset) }
    }

    /// Registers what the connection waits for: always readable (a reset or close is noticed even
    /// while idle), writable while output is pending.
    private func settle(_ connection: ClientConnection) {
        let wanted: IOEvents = connection.hasPendingOutput ? [.readable, .writable] : .readable
        if wanted != connection.interest {
            connection.interest = wanted
            poller.update(connection.fd, interest: wanted, token: connection.id.rawValue)
        }
    }

    // MARK: - Timers

    private func waitTimeoutMilliseconds() -> Int32 {
        guard let next = timers.nextDeadline else { return -1 }
        let current = cepoll_monotonic_ns()
        if next <= current { return 0 }
        return Int32(min((next - current + 999_999) / 1_000_000, 60_000))
    }

    private func runDueTimers() {
        while let entry = timers.popDue(now: now) {
            switch entry.payload {
            case .deadline(let id):
                perform(machine.requestEnded(id, error: .timedOut))
            case .idle(let id):
                perform(machine.idleTimerFired(id, now: now))
            case .continueWait(let id):
                guard let connection = connection(id), let body = connection.heldBody else { continue }
                sendHeldBody(body, on: connection)  // no 100 Continue in time: send it anyway (RFC 9110 §10.1.1)
            }
        }
    }
}
