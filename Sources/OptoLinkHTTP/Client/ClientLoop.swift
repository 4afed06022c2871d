import CEpoll
import Synchronization
import SoakSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What callers share with one client loop thread: its inbox, wake-up channel and stop flag.
final class ClientLoopShared: Sendable {
    let waker: Waker
    let stopping = Atomic<Bool>(false)
    /// Set when the client was dropped without `shutdown()`: the loop closes its wake-up channel on exit.
    let closeWakerOnExit = Atomic<Bool>(false)
    private let inbox = Mutex<Inbox>(Inbox())

    private struct Inbox {
        var commands: [ClientCommand] = []
        /// Set by the loop as it exits: nothing posted later is taken.
        var closed = false
    }
    /// Commands posted and not yet taken by the loop.
    private let queued = Atomic<Int>(0)
    /// Set by the loop while it may block in its poller; a poster that clears it wakes the loop.
    private let parked = Atomic<Bool>(false)
    /// Whether the wake-up channel's descriptors are still open. Signalling and closing both hold
    /// this lock, so a signal can never land on a closed descriptor whose number was reused.
    private let wakerOpen = Mutex(true)

    init(waker: Waker) { self.waker = waker }

    /// Queues a command; wakes the loop only when it is parked in its poller (a busy loop takes
    /// the inbox on its next turn without a wake-up system call).
    ///
    /// Why no command is left behind: the poster counts its command, then clears `parked`; the
    /// loop sets `parked`, then reads the count (``park()``), all sequentially consistent. So either
    /// the loop sees the command and does not block, or the poster sees `parked` and wakes it.
    @discardableResult
    func post(_ command: consuming ClientCommand) -> Bool {
        var pending: ClientCommand? = consume command  // moved into the inbox, not copied
        let accepted = inbox.withLock { box in
            guard !box.closed, let command = pending.take() else { return false }
            box.commands.append(command)
            return true
        }
        guard accepted else { return false }
        queued.add(1, ordering: .sequentiallyConsistent)
        if parked.exchange(false, ordering: .sequentiallyConsistent) { wake() }
        return true
    }

    /// The loop is about to wait in its poller: returns `false` when commands are already queued
    /// (then it must not block).
    func park() -> Bool {
        parked.store(true, ordering: .sequentiallyConsistent)
        return queued.load(ordering: .sequentiallyConsistent) == 0
    }

    /// The loop is back from its poller.
    func unpark() { parked.store(false, ordering: .relaxed) }

    /// Whether commands wait in the inbox.
    var hasQueued: Bool { queued.load(ordering: .acquiring) > 0 }

    /// Wakes the loop, unless its wake-up channel is already closed.
    func wake() {
        wakerOpen.withLock { open in if open { waker.signal() } }
    }

    /// Closes the wake-up channel once.
    func closeWaker() {
        wakerOpen.withLock { open in
            guard open else { return }
            open = false
            for fd in waker.descriptors { close(fd) }
        }
    }

    /// Moves every queued command, in posting order, into `batch` (which must be empty): the two
    /// arrays trade buffers, so neither the commands nor a buffer are copied or allocated.
    func takeAll(into batch: inout [ClientCommand], closing: Bool = false) {
        inbox.withLock { box in
            if closing { box.closed = true }
            guard !box.commands.isEmpty else { return }
            queued.subtract(box.commands.count, ordering: .sequentiallyConsistent)
            swap(&box.commands, &batch)
        }
    }
}

/// A client loop is also a task executor: a task that prefers it runs its jobs on the loop's
/// thread, between readiness turns, so a request it sends and the response that resumes it never
/// cross threads (no inbox wake-up, no hand-off to the global pool).
extension ClientLoopShared: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // The loop has exited: the job runs on the global pool instead of never.
        if !post(.run(job)) { globalConcurrentExecutor.enqueue(job) }
    }

    func runJob(_ job: UnownedJob) {
        job.runSynchronously(on: asUnownedTaskExecutor())
    }
}

/// One client event loop on its own thread: opens, reuses and closes connections, writes
/// requests, parses responses and enforces deadlines. Generic over the same readiness backends
/// as the server's loop (``EpollPoller`` on Linux, ``PollPoller`` anywhere).
///
/// Everything here is touched only by the loop's thread. Callers reach it through
/// ``ClientLoopShared`` (a locked inbox plus the wake-up channel); results go back through each
/// request's ``ClientCall``. The inbox also carries the jobs of tasks that prefer this loop as
/// their executor; the loop runs them in order with the commands, after each readiness turn. A request is sent at most once: a failure is reported, never retried.
final class ClientLoop<Poller: ReadinessPoller> {
    private struct Job {
        var call: ClientCall
        /// Taken (moved out) when it is written: a request is sent once, and the job keeps only
        /// what is still needed to finish it.
        var request: HTTPClientRequest?
        /// The host's addresses, tried in turn while a connection for it is refused.
        var addresses: [ClientAddress]
        /// The address the job's current (or next) connection uses.
        var addressIndex = 0
        var key: ClientPoolKey
        /// The connection carrying it (token), once it has one.
        var connection: UInt64?
    }

    private enum Timer {
        case deadline(UInt64)
        case idle(UInt64)
        case continueWait(UInt64)
    }

    private static var wakeToken: UInt64 { 1 << 63 }
    private static var readChunk: Int { 64 * 1024 }

    private let poller: Poller
    private let shared: ClientLoopShared
    private let configuration: HTTPClient.Configuration
    private let poolLimit: Int
    private let portable: Bool
    private var connections: [ClientConnection?] = []
    private var pools: [ClientPoolKey: ClientPool] = [:]
    private var jobs: [UInt64: Job] = [:]
    private var timers = TimerHeap<Timer>()
    private var idleTimerArmed: Set<UInt64> = []
    private var now: UInt64
    private var generation: UInt64 = 0
    private let readBuffer: UnsafeMutableRawBufferPointer
    /// The empty buffer ``processInbox()`` trades with the inbox's on each turn.
    private var inboxBatch: [ClientCommand] = []

    init(poller: Poller, shared: ClientLoopShared, configuration: HTTPClient.Configuration, poolLimit: Int) {
        self.poller = poller
        self.shared = shared
        self.configuration = configuration
        self.poolLimit = poolLimit
        self.portable = Poller.usesPortableCalls
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
                    handle(events, token: token)
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
        for job in jobs.values { job.call.finish(.failure(.shutDown)) }
        jobs.removeAll()
        for case let connection? in connections { closeSocket(connection) }
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
                abort(id, with: .cancelled)
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
        let key = ClientPoolKey(host: request.host, port: request.port, partition: partition)
        jobs[call.id] = Job(call: call, request: consume request, addresses: addresses, key: key)
        timers.schedule(at: deadline, .deadline(call.id))
        dispatch(call.id, key: key)
    }

    /// Gives a request an idle connection, a new one, or a place in its pool's queue.
    private func dispatch(_ id: UInt64, key: ClientPoolKey) {
        let pool: ClientPool
        if let known = pools[key] {
            pool = known
        } else {
            pool = ClientPool(limit: key.partition == nil ? poolLimit : 1)
            pools[key] = pool
        }
        while let token = pool.idle.popLast() {
            guard let connection = connection(for: token), connection.phase == .idle else { continue }
            assign(id, to: connection)
            return
        }
        if pool.open < pool.limit {
            pool.open += 1
            openConnection(for: id, key: key)
            return
        }
        pool.enqueue(id)
    }

    /// Ends a request that is still pending (deadline or cancellation) and closes its socket at once.
    private func abort(_ id: UInt64, with error: HTTPClientError) {
        guard let job = jobs.removeValue(forKey: id) else { return }
        job.call.finish(.failure(error))
        if let token = job.connection, let connection = connection(for: token) {
            connection.callId = nil
            closeConnection(connection)
        }
    }

    // MARK: - Connections

    private func openConnection(for id: UInt64, key: ClientPoolKey) {
        guard let address = jobs.modifyValue(forKey: id, { $0.addresses[$0.addressIndex] }) else { return }
        let fd = cepoll_stream_socket(address.family, portable ? 1 : 0)
        guard fd >= 0 else {
            let code = cepoll_errno()
            pools.modifyValue(forKey: key) { $0.open -= 1 }
            fail(id, .cannotConnect(errno: code))
            return
        }
        generation = (generation &+ 1) & 0x7FFF_FFFF
        let token = (generation << 32) | UInt64(UInt32(fd))
        let connection = ClientConnection(
            fd: fd, token: token, pool: key, limits: configuration.responseLimits)
        if Int(fd) >= connections.count {
            connections.append(contentsOf: repeatElement(nil, count: Int(fd) + 1 - connections.count))
        }
        connections[Int(fd)] = connection
        connection.callId = id
        jobs.modifyValue(forKey: id) { $0.connection = token }
        let rc = address.bytes.withUnsafeBytes { raw in
            connect(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        let code = rc == 0 ? 0 : cepoll_errno()
        if rc != 0 && code != EINPROGRESS && code != EINTR {
            connectFailed(connection, errno: code)
            return
        }
        connection.interest = .writable
        guard poller.register(fd, interest: .writable, token: token) else {
            connectFailed(connection, errno: cepoll_errno())
            return
        }
        if rc == 0 { connected(connection) }
    }

    /// A connection that could not be made: its request, not sent yet, tries the host's next
    /// address on a fresh socket in the same pool slot, or fails when none is left.
    private func connectFailed(_ connection: ClientConnection, errno code: Int32) {
        if let id = connection.callId, var job = jobs[id], job.addressIndex + 1 < job.addresses.count {
            job.addressIndex += 1
            job.connection = nil
            jobs[id] = job
            connection.callId = nil
            closeSocket(connection)  // the pool slot passes to the next attempt's socket
            openConnection(for: id, key: connection.pool)
            return
        }
        let error: HTTPClientError = code == ECONNREFUSED ? .connectionRefused : .cannotConnect(errno: code)
        failAndClose(connection, error)
    }

    private func connected(_ connection: ClientConnection) {
        _ = cepoll_enable_option(connection.fd, CEPOLL_IPPROTO_TCP, CEPOLL_TCP_NODELAY)
        connection.phase = .busy
        guard let id = connection.callId, let request = jobs.modifyValue(forKey: id, { $0.request.take() }) ?? nil
        else {
            release(connection)  // its request ended while connecting: keep the connection for the next
            return
        }
        writeRequest(request, on: connection)
    }

    private func assign(_ id: UInt64, to connection: ClientConnection) {
        connection.phase = .busy
        connection.callId = id
        let request = jobs.modifyValue(forKey: id) { job in
            job.connection = connection.token
            return job.request.take()
        }
        guard let request = request ?? nil else { return }
        writeRequest(request, on: connection)
    }

    private func writeRequest(_ request: HTTPClientRequest, on connection: ClientConnection) {
        HTTPRequestSerializer.serializeHead(
            method: request.method, target: request.target, host: request.host, port: request.port,
            headers: request.headers, bodyLength: request.body.count, into: &connection.output)
        if request.expectsContinue {
            connection.heldBody = request.body
            timers.schedule(
                at: now &+ configuration.continueTimeout.nanosecondsClamped, .continueWait(connection.token))
        } else {
            connection.output.append(contentsOf: request.body)
        }
        connection.parser.expectResponse(toHEAD: request.method == "HEAD")
        flush(connection)
        if !connection.closed { settle(connection) }
    }

    /// Returns a connection to its pool: the next waiting request takes it, or it idles.
    private func release(_ connection: ClientConnection) {
        connection.callId = nil
        guard let pool = pools[connection.pool] else {
            closeConnection(connection)  // not reached: an open connection's pool stays until it closes
            return
        }
        while let id = pool.dequeue() {
            guard jobs.modifyValue(forKey: id, { $0.connection == nil }) == true else { continue }
            assign(id, to: connection)
            return
        }
        connection.phase = .idle
        connection.idleSince = now
        pool.idle.append(connection.token)
        if !idleTimerArmed.contains(connection.token) {
            idleTimerArmed.insert(connection.token)
            timers.schedule(at: now &+ configuration.idleTimeout.nanosecondsClamped, .idle(connection.token))
        }
        settle(connection)
    }

    private func fail(_ id: UInt64, _ error: HTTPClientError) {
        guard let job = jobs.removeValue(forKey: id) else { return }
        job.call.finish(.failure(error))
    }

    private func failAndClose(_ connection: ClientConnection, _ error: HTTPClientError) {
        if let id = connection.callId { fail(id, error) }
        connection.callId = nil
        closeConnection(connection)
    }

    /// Closes the socket, frees its pool slot, and lets a waiting request open a new connection.
    private func closeConnection(_ connection: ClientConnection) {
        guard !connection.closed else { return }
        closeSocket(connection)
        guard let pool = pools[connection.pool] else { return }
        pool.open -= 1
        while pool.open < pool.limit, let id = pool.dequeue() {
            guard jobs.modifyValue(forKey: id, { $0.connection == nil }) == true else { continue }
            pool.open += 1
            openConnection(for: id, key: connection.pool)
            return
        }
        if pool.open == 0 && !pool.hasWaiting {
            pools[connection.pool] = nil  // per-partition pools come and go with their devices
        }
    }

    private func closeSocket(_ connection: ClientConnection) {
        guard !connection.closed else { return }
        connection.closed = true
        connections[Int(connection.fd)] = nil
        idleTimerArmed.remove(connection.token)
        poller.willClose(connection.fd)
        close(connection.fd)
    }

    private func connection(for token: UInt64) -> ClientConnection? {
        let fd = Int(token & 0xFFFF_FFFF)
        guard fd < connections.count, let connection = connections[fd], connection.token == token else { return nil }
        return connection
    }

    // MARK: - I/O

    private func handle(_ events: IOEvents, token: UInt64) {
        guard let connection = connection(for: token) else { return }
        if connection.phase == .connecting {
            guard events.contains(.writable) || events.contains(.failed) else { return }
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            if getsockopt(connection.fd, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { code = cepoll_errno() }
            if code != 0 {
                connectFailed(connection, errno: code)
            } else {
                connected(connection)
            }
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
            let n = read(connection.fd, readBuffer.baseAddress, readBuffer.count)
            if n > 0 {
                guard connection.callId != nil else {
                    closeConnection(connection)  // bytes nobody asked for: the connection cannot be trusted
                    return
                }
                connection.parser.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<n]))
                guard takeResponses(connection) else { return }
                if n < readBuffer.count { return }
            } else if n == 0 {
                endOfInput(connection)
                return
            } else {
                let code = cepoll_errno()
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return }
                failAndClose(connection, .connectionReset)
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
                failAndClose(connection, .badResponse(error))
                return false
            }
        }
        return true
    }

    private func endOfInput(_ connection: ClientConnection) {
        guard connection.callId != nil else {
            closeConnection(connection)  // the server closed an idle keep-alive connection
            return
        }
        switch connection.parser.finish() {
        case .response(let response, _)?:
            complete(connection, with: response, reusable: false)
        case .failure(.truncated)?, nil, .informational?:
            failAndClose(connection, .connectionClosed)
        case .failure(let error)?:
            failAndClose(connection, .badResponse(error))
        }
    }

    private func complete(_ connection: ClientConnection, with response: HTTPClientResponse, reusable: Bool) {
        if let id = connection.callId, let job = jobs.removeValue(forKey: id) {
            job.call.finish(.success(response))
        }
        connection.callId = nil
        connection.served += 1
        if reusable && !shared.stopping.load(ordering: .relaxed) {
            release(connection)
        } else {
            closeConnection(connection)
        }
    }

    private func sendHeldBody(_ body: [UInt8], on connection: ClientConnection) {
        connection.heldBody = nil
        connection.output.append(contentsOf: body)
        flush(connection)
        if !connection.closed { settle(connection) }
    }

    /// Writes as much pending output as the socket takes.
    private func flush(_ connection: ClientConnection) {
        let (outcome, _) = SocketWrite.flush(connection.fd, &connection.output, &connection.outputOffset)
        if outcome == .failed { failAndClose(connection, .connectionReset) }
    }

    /// Registers what the connection waits for: always readable (a reset or close is noticed even
    /// while idle), writable while output is pending.
    private func settle(_ connection: ClientConnection) {
        let wanted: IOEvents = connection.hasPendingOutput ? [.readable, .writable] : .readable
        if wanted != connection.interest {
            connection.interest = wanted
            poller.update(connection.fd, interest: wanted, token: connection.token)
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
                abort(id, with: .timedOut)
            case .idle(let token):
                guard let connection = connection(for: token) else { continue }
                idleTimerArmed.remove(token)
                guard connection.phase == .idle else { continue }
                let expiry = connection.idleSince &+ configuration.idleTimeout.nanosecondsClamped
                if expiry <= now {
                    closeConnection(connection)
                } else {
                    idleTimerArmed.insert(token)
                    timers.schedule(at: expiry, .idle(token))
                }
            case .continueWait(let token):
                guard let connection = connection(for: token), let body = connection.heldBody else { continue }
                sendHeldBody(body, on: connection)  // no 100 Continue in time: send it anyway (RFC 9110 §10.1.1)
            }
        }
    }
}
