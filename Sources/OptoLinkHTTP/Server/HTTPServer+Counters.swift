import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension HTTPServer {
    /// A snapshot of what the server has done since ``HTTPServer/start()``, summed over its loops.
    package struct Counters: Sendable, Equatable, Codable {
        /// Connections accepted (including those closed at once for exceeding `maxConnections`).
        package var connectionsAccepted: Int
        /// Connections open right now.
        package var connectionsOpen: Int
        /// Connections closed right after accept because `maxConnections` were open and none could be
        /// reclaimed (every one of the accepting loop had a complete request in hand, a response being
        /// written, or was closing).
        package var connectionsRejected: Int
        /// Idle connections closed to make room for a new client at `maxConnections`.
        package var connectionsReclaimed: Int
        /// Connections still receiving a request (partial head, stalled body) answered 408 and closed to
        /// make room for a new client at `maxConnections`, when no idle one was left (docs/LINUX.md §2).
        /// Their 408s are also in ``badRequestsByStatus``, not in ``requestTimeouts``.
        package var connectionsReclaimedMidRequest: Int
        /// Requests parsed completely and passed to the handler.
        package var requests: Int
        /// Requests answered by the server itself with an error status (400, 408, 411, 413, 431, 501, 505), by status.
        package var badRequestsByStatus: [Int: Int]
        /// Keep-alive connections closed for being idle.
        package var idleTimeouts: Int
        /// Connections ended for a request that arrived too slowly (408), a response the client did not
        /// read, or no byte at all within the request timeout after accept (closed without an answer).
        package var requestTimeouts: Int
        /// Connections aborted with a TCP reset because the handler returned ``HTTPHandlerResult/reset``.
        package var resets: Int
        /// Connections closed with no response because the handler returned ``HTTPHandlerResult/close``.
        package var closedWithoutResponse: Int

        /// Every count set to zero.
        package init() {
            connectionsAccepted = 0
            connectionsOpen = 0
            connectionsRejected = 0
            connectionsReclaimed = 0
            connectionsReclaimedMidRequest = 0
            requests = 0
            badRequestsByStatus = [:]
            idleTimeouts = 0
            requestTimeouts = 0
            resets = 0
            closedWithoutResponse = 0
        }

        /// All bad requests, whatever their status.
        package var badRequests: Int { badRequestsByStatus.values.reduce(0, +) }

        private enum CodingKeys: String, CodingKey {
            case connectionsAccepted, connectionsOpen, connectionsRejected, connectionsReclaimed
            case connectionsReclaimedMidRequest, requests
            case badRequestsByStatus
            case idleTimeouts, requestTimeouts, resets, closedWithoutResponse
        }

        /// Decodes the shape ``encode(to:)`` writes.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            connectionsAccepted = try container.decode(Int.self, forKey: .connectionsAccepted)
            connectionsOpen = try container.decode(Int.self, forKey: .connectionsOpen)
            connectionsRejected = try container.decode(Int.self, forKey: .connectionsRejected)
            connectionsReclaimed = try container.decodeIfPresent(Int.self, forKey: .connectionsReclaimed) ?? 0
            connectionsReclaimedMidRequest =
                try container.decodeIfPresent(Int.self, forKey: .connectionsReclaimedMidRequest) ?? 0
            requests = try container.decode(Int.self, forKey: .requests)
            idleTimeouts = try container.decode(Int.self, forKey: .idleTimeouts)
            requestTimeouts = try container.decode(Int.self, forKey: .requestTimeouts)
            resets = try container.decode(Int.self, forKey: .resets)
            closedWithoutResponse = try container.decodeIfPresent(Int.self, forKey: .closedWithoutResponse) ?? 0
            let byStatus = try container.decode([String: Int].self, forKey: .badRequestsByStatus)
            badRequestsByStatus = [:]
            for (status, count) in byStatus {
                guard let code = Int(status) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .badRequestsByStatus, in: container,
                        debugDescription: "status \"\(status)\" is not a number")
                }
                badRequestsByStatus[code] = count
            }
        }

        /// A JSON object; `badRequestsByStatus` is keyed by the status as a string (`{"400": 2}`).
        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(connectionsAccepted, forKey: .connectionsAccepted)
            try container.encode(connectionsOpen, forKey: .connectionsOpen)
            try container.encode(connectionsRejected, forKey: .connectionsRejected)
            try container.encode(connectionsReclaimed, forKey: .connectionsReclaimed)
            try container.encode(connectionsReclaimedMidRequest, forKey: .connectionsReclaimedMidRequest)
            try container.encode(requests, forKey: .requests)
            try container.encode(idleTimeouts, forKey: .idleTimeouts)
            try container.encode(requestTimeouts, forKey: .requestTimeouts)
            try container.encode(resets, forKey: .resets)
            try container.encode(closedWithoutResponse, forKey: .closedWithoutResponse)
            let byStatus = Dictionary(uniqueKeysWithValues: badRequestsByStatus.map { (String($0.key), $0.value) })
            try container.encode(byStatus, forKey: .badRequestsByStatus)
        }
    }
}

/// Counters one event loop writes (relaxed atomics, one writer) and anyone may read.
///
/// Atomics only, no locks: a loop thread never waits for a reader.
final class LoopCounters: Sendable {
    /// One count per status the server answers by itself.
    final class StatusCount: Sendable {
        let status: Int
        let count = Atomic<Int>(0)
        init(status: Int) { self.status = status }
    }

    let accepted = Atomic<Int>(0)
    let rejected = Atomic<Int>(0)
    let reclaimed = Atomic<Int>(0)
    let reclaimedMidRequest = Atomic<Int>(0)
    let requests = Atomic<Int>(0)
    let idleTimeouts = Atomic<Int>(0)
    let requestTimeouts = Atomic<Int>(0)
    let resets = Atomic<Int>(0)
    let closedWithoutResponse = Atomic<Int>(0)
    /// Every status ``HTTPParseError`` maps to, plus 408 for slow clients.
    let badRequests = [400, 408, 411, 413, 431, 501, 505].map(StatusCount.init)

    func recordBadRequest(status: Int) {
        // The statuses come from HTTPParseError and the 408 timeout, all listed above.
        let counter = badRequests.first { $0.status == status } ?? badRequests[0]
        counter.count.wrappingAdd(1, ordering: .relaxed)
    }
}

/// State every loop of one server shares: the shutdown flag, the open-connection count, ids, descriptors.
final class ServerShared: Sendable {
    let shuttingDown = Atomic<Bool>(false)
    /// Set when the server was dropped without shutdown(): nobody joins the loops, so each closes its wake-up channel.
    let loopsCloseWakeFDs = Atomic<Bool>(false)
    let openConnections = Atomic<Int>(0)
    let nextConnectionId = Atomic<UInt64>(0)
    /// Descriptors the server holds right now (listeners, epoll sets, wake-up channels, connections).
    /// Every one is opened through ``track(_:)`` and closed through ``release(_:)``, so a test can
    /// check that each is closed exactly once (the count returns to zero, never below).
    let descriptorsHeld = Atomic<Int>(0)
    let loops: [LoopCounters]

    init(loopCount: Int) {
        loops = (0..<loopCount).map { _ in LoopCounters() }
    }

    /// Counts a freshly opened descriptor (negative values, i.e. failures, are ignored); returns it.
    @discardableResult
    func track(_ fd: Int32) -> Int32 {
        if fd >= 0 { descriptorsHeld.wrappingAdd(1, ordering: .relaxed) }
        return fd
    }

    /// Closes a descriptor opened through ``track(_:)``.
    func release(_ fd: Int32) {
        descriptorsHeld.wrappingSubtract(1, ordering: .relaxed)
        close(fd)
    }

    func counters() -> HTTPServer.Counters {
        var result = HTTPServer.Counters()
        result.connectionsOpen = openConnections.load(ordering: .relaxed)
        for loop in loops {
            result.connectionsAccepted += loop.accepted.load(ordering: .relaxed)
            result.connectionsRejected += loop.rejected.load(ordering: .relaxed)
            result.connectionsReclaimed += loop.reclaimed.load(ordering: .relaxed)
            result.connectionsReclaimedMidRequest += loop.reclaimedMidRequest.load(ordering: .relaxed)
            result.requests += loop.requests.load(ordering: .relaxed)
            result.idleTimeouts += loop.idleTimeouts.load(ordering: .relaxed)
            result.requestTimeouts += loop.requestTimeouts.load(ordering: .relaxed)
            result.resets += loop.resets.load(ordering: .relaxed)
            result.closedWithoutResponse += loop.closedWithoutResponse.load(ordering: .relaxed)
            for counter in loop.badRequests {
                let count = counter.count.load(ordering: .relaxed)
                if count > 0 { result.badRequestsByStatus[counter.status, default: 0] += count }
            }
        }
        return result
    }
}
