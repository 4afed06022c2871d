/// The decisions of one client loop's connection pools, with no system call and no clock of its
/// own: the loop reports what happened (a request submitted, a connection made or refused, a
/// response complete, a connection lost, a request's deadline or cancellation, an idle timer) and
/// performs the ``ClientPoolActions`` it gets back (open a connection, write a request on one,
/// fail a request, close a connection, park one idle).
///
/// Rules it keeps:
/// - A pool (one per ``ClientPoolKey``) holds at most its limit of connections, connecting, busy
///   and idle together; a request that finds none free waits in arrival order.
/// - An idle connection is reused most recently parked first (its socket is warmest).
/// - A request is written at most once. Once written, a lost connection fails it; only a
///   request the loop found unsent on a stale connection (``staleConnection(_:)``) moves on.
/// - A refused connect tries the host's next address on a fresh connection in the same slot.
/// - Freeing a slot (a close for any reason) lets the first waiting request open a connection.
package struct ClientPoolStateMachine {
    package typealias RequestID = UInt64

    private enum Phase: Equatable {
        /// `connect` in progress for this request (`nil` once the request ended) with this address.
        case connecting(request: RequestID?, addressIndex: Int)
        case busy(RequestID)
        case idle(since: UInt64)
    }

    private struct Connection {
        var id: ClientConnectionID
        var pool: Int
        var phase: Phase
        var idleTimerArmed = false
    }

    private struct Request {
        var pool: Int
        var connection: ClientConnectionID?
        var addressCount: Int
    }

    /// A class, so taking and returning a connection changes its lists in place (a struct in
    /// the machine's array could be copied, lists and all, on each request).
    private final class Pool {
        let key: ClientPoolKey
        let limit: Int
        /// Open connections (connecting, busy or idle).
        var open = 0
        /// Idle connections, most recently parked last.
        var idle: [ClientConnectionID] = []
        /// Requests waiting for a connection, in arrival order; entries before `head` are taken.
        var waiting: [RequestID] = []
        var head = 0

        init(key: ClientPoolKey, limit: Int) {
            self.key = key
            self.limit = limit
        }

        var hasWaiting: Bool { head < waiting.count }

        func dequeue() -> RequestID? {
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

    /// How long a connection may stay idle before it is closed, in nanoseconds.
    package let idleTimeout: UInt64
    /// The connection limit of a shared pool (a partition's pool holds one connection).
    package let poolLimit: Int
    private var pools: [Pool?] = []
    private var freePools: [Int] = []
    private var poolIndex: [ClientPoolKey: Int] = [:]
    private var requests: [RequestID: Request] = [:]
    private var connections: [Connection?] = []
    private var freeSlots: [Int] = []
    private var generation: UInt64 = 0

    package init(poolLimit: Int, idleTimeout: UInt64) {
        self.poolLimit = poolLimit
        self.idleTimeout = idleTimeout
    }

    /// Requests submitted and not yet ended.
    package var pendingRequestCount: Int { requests.count }

    /// Open connections of every pool.
    package var openConnectionCount: Int { pools.reduce(0) { $0 + ($1?.open ?? 0) } }

    /// The pool a connection belongs to (`nil` for an unknown or closed one).
    package func key(of connection: ClientConnectionID) -> ClientPoolKey? {
        guard let state = self.connection(connection) else { return nil }
        return pools[state.pool]?.key
    }

    // MARK: - Events

    /// A request is submitted; `addressCount` is how many addresses its host has.
    package mutating func submit(_ request: RequestID, key: ClientPoolKey, addressCount: Int) -> ClientPoolActions {
        let pool = poolFor(key)
        requests[request] = Request(pool: pool, connection: nil, addressCount: max(1, addressCount))
        return ClientPoolActions(next: dispatch(request, pool: pool))
    }

    /// A connection's `connect` completed.
    package mutating func connected(_ id: ClientConnectionID, now: UInt64) -> ClientPoolActions {
        guard let slot = slot(of: id), case .connecting(let request, _) = connections[slot]?.phase else { return .none }
        if let request {
            connections[slot]?.phase = .busy(request)
            return ClientPoolActions(next: .write(request, on: id, reused: false))
        }
        return ClientPoolActions(next: release(slot, now: now))
    }

    /// A connection's `connect` failed with `error`: its request tries the next address on a new
    /// connection in the same slot (unless `mayTryNextAddress` is `false`: no socket could be
    /// made at all), or fails when none is left.
    package mutating func connectFailed(
        _ id: ClientConnectionID, error: HTTPClientError, mayTryNextAddress: Bool = true
    ) -> ClientPoolActions {
        guard let slot = slot(of: id), let state = connections[slot],
            case .connecting(let request, let addressIndex) = state.phase
        else { return .none }
        if mayTryNextAddress, let request, let entry = requests[request], addressIndex + 1 < entry.addressCount {
            connections[slot] = nil
            freeSlots.append(slot)
            let next = newConnection(pool: state.pool, request: request, addressIndex: addressIndex + 1)
            return ClientPoolActions(close: id, next: next)
        }
        var actions = closing(slot)
        if let request, requests.removeValue(forKey: request) != nil { actions.fail = .init(request, error) }
        return actions
    }

    /// The response on a connection is complete (and delivered). `reusable`: the connection may
    /// carry another request.
    package mutating func responseReceived(on id: ClientConnectionID, reusable: Bool, now: UInt64) -> ClientPoolActions
    {
        guard let slot = slot(of: id), case .busy(let request) = connections[slot]?.phase else { return .none }
        requests[request] = nil
        return reusable ? ClientPoolActions(next: release(slot, now: now)) : closing(slot)
    }

    /// A connection ended on its own: reset, closed by the peer, broken framing, a failed write,
    /// or bytes nobody asked for. A request on it fails with `error`.
    package mutating func connectionLost(_ id: ClientConnectionID, error: HTTPClientError) -> ClientPoolActions {
        guard let slot = slot(of: id), let state = connections[slot] else { return .none }
        var actions = closing(slot)
        switch state.phase {
        case .busy(let request), .connecting(let request?, _):
            if requests.removeValue(forKey: request) != nil { actions.fail = .init(request, error) }
        case .idle, .connecting(nil, _):
            break
        }
        return actions
    }

    /// The loop found a parked connection closed (or holding unsolicited bytes) before writing
    /// the request the machine assigned to it: the connection closes and the request, never
    /// sent, goes to another connection.
    package mutating func staleConnection(_ id: ClientConnectionID) -> ClientPoolActions {
        guard let slot = slot(of: id), let state = connections[slot], case .busy(let request) = state.phase else {
            return .none
        }
        connections[slot] = nil
        freeSlots.append(slot)
        pools[state.pool]?.open -= 1
        requests[request]?.connection = nil
        return ClientPoolActions(close: id, next: dispatch(request, pool: state.pool))
    }

    /// A request's deadline passed or it was cancelled: it fails with `error`, and the connection
    /// carrying it (if any) closes at once.
    package mutating func requestEnded(_ request: RequestID, error: HTTPClientError) -> ClientPoolActions {
        guard let entry = requests.removeValue(forKey: request) else { return .none }
        var actions = ClientPoolActions()
        if let id = entry.connection, let slot = slot(of: id) { actions = closing(slot) }
        actions.fail = .init(request, error)
        return actions
    }

    /// A connection's idle timer fired at `now`.
    package mutating func idleTimerFired(_ id: ClientConnectionID, now: UInt64) -> ClientPoolActions {
        guard let slot = slot(of: id), let state = connections[slot] else { return .none }
        connections[slot]?.idleTimerArmed = false
        guard case .idle(let since) = state.phase else { return .none }
        let expiry = since &+ idleTimeout
        if expiry <= now { return closing(slot) }
        connections[slot]?.idleTimerArmed = true
        return ClientPoolActions(next: .scheduleIdleTimer(id, at: expiry))
    }

    /// The client shuts down: every pending request fails, every connection closes.
    package mutating func shutdown() -> (fail: [RequestID], close: [ClientConnectionID]) {
        let failed = Array(requests.keys)
        let closed = connections.compactMap { $0?.id }
        requests.removeAll()
        connections.removeAll()
        freeSlots.removeAll()
        pools.removeAll()
        freePools.removeAll()
        poolIndex.removeAll()
        return (failed, closed)
    }

    // MARK: - Decisions

    /// Gives a request an idle connection, a new one, or a place in its pool's queue.
    private mutating func dispatch(_ request: RequestID, pool: Int) -> ClientPoolActions.Next {
        while let id = pools[pool]?.idle.popLast() {
            guard let slot = slot(of: id), case .idle = connections[slot]?.phase else { continue }
            return assign(request, toSlot: slot)
        }
        guard hasRoom(pool) else {
            pools[pool]?.waiting.append(request)
            return .none
        }
        pools[pool]?.open += 1
        return newConnection(pool: pool, request: request, addressIndex: 0)
    }

    private mutating func assign(_ request: RequestID, toSlot slot: Int) -> ClientPoolActions.Next {
        guard let id = connections[slot]?.id else { return .none }
        connections[slot]?.phase = .busy(request)
        requests[request]?.connection = id
        return .write(request, on: id, reused: true)
    }

    private mutating func newConnection(pool: Int, request: RequestID, addressIndex: Int) -> ClientPoolActions.Next {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = connections.count
            connections.append(nil)
        }
        generation = (generation &+ 1) & 0x7FFF_FFFF
        let id = ClientConnectionID(slot: slot, generation: generation)
        connections[slot] = Connection(
            id: id, pool: pool, phase: .connecting(request: request, addressIndex: addressIndex))
        requests[request]?.connection = id
        let key = pools[pool]?.key ?? ClientPoolKey(host: "", port: 0, partition: nil)
        return .connect(id, key: key, addressIndex: addressIndex, for: request)
    }

    /// A free connection: the first waiting request takes it, or it parks idle.
    private mutating func release(_ slot: Int, now: UInt64) -> ClientPoolActions.Next {
        guard let state = connections[slot] else { return .none }
        while let request = pools[state.pool]?.dequeue() {
            guard let waiting = requests[request], waiting.connection == nil else { continue }  // ended while waiting
            return assign(request, toSlot: slot)
        }
        connections[slot]?.phase = .idle(since: now)
        pools[state.pool]?.idle.append(state.id)
        if state.idleTimerArmed { return .park(state.id, idleTimerAt: nil) }
        connections[slot]?.idleTimerArmed = true
        return .park(state.id, idleTimerAt: now &+ idleTimeout)
    }

    /// Closes a connection, frees its pool slot, and lets the first waiting request open a new one.
    private mutating func closing(_ slot: Int) -> ClientPoolActions {
        guard let state = connections[slot] else { return .none }
        connections[slot] = nil
        freeSlots.append(slot)
        var actions = ClientPoolActions(close: state.id)
        let pool = state.pool
        guard pools[pool] != nil else { return actions }
        pools[pool]?.open -= 1
        if case .idle = state.phase, let index = pools[pool]?.idle.lastIndex(of: state.id) {
            pools[pool]?.idle.remove(at: index)
        }
        while hasRoom(pool), let request = pools[pool]?.dequeue() {
            guard let waiting = requests[request], waiting.connection == nil else { continue }  // ended while waiting
            pools[pool]?.open += 1
            actions.next = newConnection(pool: pool, request: request, addressIndex: 0)
            return actions
        }
        if pools[pool]?.open == 0, pools[pool]?.hasWaiting == false, let key = pools[pool]?.key {
            // Per-partition pools come and go with their devices.
            poolIndex[key] = nil
            pools[pool] = nil
            freePools.append(pool)
        }
        return actions
    }

    /// Whether the pool may open another connection (reads fields only: no copy of its lists).
    private func hasRoom(_ pool: Int) -> Bool {
        guard let open = pools[pool]?.open, let limit = pools[pool]?.limit else { return false }
        return open < limit
    }

    private mutating func poolFor(_ key: ClientPoolKey) -> Int {
        if let index = poolIndex[key] { return index }
        let pool = Pool(key: key, limit: key.partition == nil ? poolLimit : 1)
        let index: Int
        if let free = freePools.popLast() {
            index = free
            pools[index] = pool
        } else {
            index = pools.count
            pools.append(pool)
        }
        poolIndex[key] = index
        return index
    }

    private func slot(of id: ClientConnectionID) -> Int? {
        let slot = id.slot
        guard slot < connections.count, connections[slot]?.id == id else { return nil }
        return slot
    }

    private func connection(_ id: ClientConnectionID) -> Connection? {
        guard let slot = slot(of: id) else { return nil }
        return connections[slot]
    }
}

/// What the loop does after one event of ``ClientPoolStateMachine``, in this order: fail a
/// request, close a connection, then the next step.
package struct ClientPoolActions: Equatable {
    /// A request that ends, and its error.
    package struct Failure: Equatable {
        package var request: ClientPoolStateMachine.RequestID
        package var error: HTTPClientError

        package init(_ request: ClientPoolStateMachine.RequestID, _ error: HTTPClientError) {
            self.request = request
            self.error = error
        }
    }

    /// The step that moves work forward.
    package enum Next: Equatable {
        case none
        /// Open a connection for `request` to `key`'s host, at its `addressIndex`th address.
        case connect(ClientConnectionID, key: ClientPoolKey, addressIndex: Int, for: ClientPoolStateMachine.RequestID)
        /// Write the request on the connection. `reused`: it was parked or carried another
        /// request, so check it for a close by the server before writing (``ClientPoolStateMachine/staleConnection(_:)``).
        case write(ClientPoolStateMachine.RequestID, on: ClientConnectionID, reused: Bool)
        /// Keep the connection idle, watching for a close; arm its idle timer when a time is given.
        case park(ClientConnectionID, idleTimerAt: UInt64?)
        /// Arm the connection's idle timer again.
        case scheduleIdleTimer(ClientConnectionID, at: UInt64)
    }

    package var fail: Failure?
    package var close: ClientConnectionID?
    package var next: Next = .none

    package static var none: ClientPoolActions { ClientPoolActions() }

    /// Actions holding `fail`, `close` and `next`.
    package init(fail: Failure? = nil, close: ClientConnectionID? = nil, next: Next = .none) {
        self.fail = fail
        self.close = close
        self.next = next
    }
}

/// A connection of one client loop: its slot in the loop's tables plus a generation that tells a
/// reused slot from the connection that held it before.
package struct ClientConnectionID: Hashable, Sendable, CustomStringConvertible {
    package let rawValue: UInt64

    package init(slot: Int, generation: UInt64) { rawValue = (generation << 32) | UInt64(UInt32(slot)) }

    package init(rawValue: UInt64) { self.rawValue = rawValue }

    package var slot: Int { Int(rawValue & 0xFFFF_FFFF) }

    package var description: String { "c\(slot)/\(rawValue >> 32)" }
}

/// Which pool a request belongs to: one per host, port and source address, and per partition
/// in the per-partition mode.
package struct ClientPoolKey: Hashable, Sendable {
    package var host: String
    package var port: Int
    package var partition: String?
    /// The local address its connections bind to (``HTTPClientRequest/sourceAddress``).
    package var source: String? = nil
    /// `https`: connections of this pool speak TLS.
    package var usesTLS = false

    /// The pool of `host`:`port` in `partition`, bound to `source`, over TLS when `usesTLS`.
    package init(host: String, port: Int, partition: String?, source: String? = nil, usesTLS: Bool = false) {
        self.host = host
        self.port = port
        self.partition = partition
        self.source = source
        self.usesTLS = usesTLS
    }
}
