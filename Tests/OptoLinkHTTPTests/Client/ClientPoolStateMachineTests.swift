import OptoLinkHTTP
import Testing

/// The pool's decisions, fed events and checked action by action: no socket, no clock, no sleep.
struct ClientPoolStateMachineTests {
    private let shared = ClientPoolKey(host: "127.0.0.1", port: 8080, partition: nil)
    private let idleTimeout: UInt64 = 30_000_000_000

    private func machine(limit: Int = 2) -> ClientPoolStateMachine {
        ClientPoolStateMachine(poolLimit: limit, idleTimeout: idleTimeout)
    }

    /// The connection a `.connect` action opens (the test fails when the action is another).
    private func opened(_ actions: ClientPoolActions, for request: UInt64, addressIndex: Int = 0) throws
        -> ClientConnectionID
    {
        guard case .connect(let id, _, let index, let forRequest) = actions.next else {
            Issue.record("expected a connect, got \(actions)")
            throw CancellationError()
        }
        #expect(forRequest == request)
        #expect(index == addressIndex)
        return id
    }

    @Test func aFirstRequestOpensAConnectionAndIsWrittenOnceItConnects() throws {
        var pool = machine()
        let id = try opened(pool.submit(1, key: shared, addressCount: 1), for: 1)
        #expect(pool.connected(id, now: 0) == ClientPoolActions(next: .write(1, on: id, reused: false)))
        #expect(pool.openConnectionCount == 1)
    }

    @Test func aReusableConnectionParksWithItsIdleTimerAndTakesTheNextRequest() throws {
        var pool = machine()
        let id = try opened(pool.submit(1, key: shared, addressCount: 1), for: 1)
        _ = pool.connected(id, now: 0)
        #expect(
            pool.responseReceived(on: id, reusable: true, now: 100)
                == ClientPoolActions(next: .park(id, idleTimerAt: 100 + idleTimeout)))
        #expect(
            pool.submit(2, key: shared, addressCount: 1) == ClientPoolActions(next: .write(2, on: id, reused: true)))
        // Parked again: the timer armed the first time still runs, so none is scheduled.
        #expect(
            pool.responseReceived(on: id, reusable: true, now: 200)
                == ClientPoolActions(next: .park(id, idleTimerAt: nil)))
        #expect(pool.pendingRequestCount == 0)
    }

    @Test func requestsBeyondTheLimitWaitAndTakeFreedConnectionsInArrivalOrder() throws {
        var pool = machine(limit: 1)
        let id = try opened(pool.submit(1, key: shared, addressCount: 1), for: 1)
        #expect(pool.submit(2, key: shared, addressCount: 1) == .none)
        #expect(pool.submit(3, key: shared, addressCount: 1) == .none)
        _ = pool.connected(id, now: 0)
        #expect(
            pool.responseReceived(on: id, reusable: true, now: 1)
                == ClientPoolActions(next: .write(2, on: id, reused: true)))
        #expect(
            pool.responseReceived(on: id, reusable: true, now: 2)
                == ClientPoolActions(next: .write(3, on: id, reused: true)))
        #expect(pool.openConnectionCount == 1)
    }

    @Test func aConnectionThatCannotBeReusedClosesAndTheNextWaitingRequestOpensOne() throws {
        var pool = machine(limit: 1)
        let first = try opened(pool.submit(1, key: shared, addressCount: 1), for: 1)
        _ = pool.submit(2, key: shared, addressCount: 1)
        _ = pool.connected(first, now: 0)
        let actions = pool.responseReceived(on: first, reusable: false, now: 1)
        #expect(actions.close == first)
        #expect(actions.fail == nil)
        let second = try opened(actions, for: 2)
        #expect(second != first)
        #expect(pool.openConnectionCount == 1)
    }

    @Test func aRefusedConnectTriesTheNextAddressInTheSameSlotThenFails() throws {
        var pool = machine(limit: 1)
        let first = try opened(pool.submit(1, key: shared, addressCount: 2), for: 1)
        let retry = pool.connectFailed(first, error: .connectionRefused)
        #expect(retry.close == first)
        #expect(retry.fail == nil)
        let second = try opened(retry, for: 1, addressIndex: 1)
        #expect(pool.openConnectionCount == 1)
        #expect(
            pool.connectFailed(second, error: .connectionRefused)
                == ClientPoolActions(fail: .init(1, .connectionRefused), close: second))
        #expect(pool.openConnectionCount == 0)
        #expect(pool.pendingRequestCount == 0)
    }

    @Test func noSocketAtAllFailsWithoutTryingTheNextAddress() throws {
        var pool = machine()
        let id = try opened(pool.submit(1, key: shared, addressCount: 3), for: 1)
        let actions = pool.connectFailed(id, error: .cannotConnect(errno: 24), mayTryNextAddress: false)
        #expect(actions == ClientPoolActions(fail: .init(1, .cannotConnect(errno: 24)), close: id))
    }

    @Test func aConnectionLostUnderARequestFailsItOnceAndNeverResendsIt() throws {
        var pool = machine(limit: 1)
        let id = try opened(pool.submit(1, key: shared, addressCount: 1), for: 1)
        _ = pool.submit(2, key: shared, addressCount: 1)
        _ = pool.connected(id, now: 0)
        let actions = pool.connectionLost(id, error: .connectionClosed)
        #expect(actions.fail == .init(1, .connectionClosed))
        #expect(actions.close == id)
        // The freed slot goes to the waiting request, never back to the failed one.
        _ = try opened(actions, for: 2)
        #expect(pool.connectionLost(id, error: .connectionClosed) == .none)
    }

    @Test func anIdleConnectionClosedByTheServerLeavesThePoolWithoutFailingAnything() throws {
        var pool = machine()
        let id = try opened(pool.submit(1, key: shared, addressCount: 1), for: 1)
        _ = pool.connected(id, now: 0)
        _ = pool.responseReceived(on: id, reusable: true, now: 1)
        #expect(pool.connectionLost(id, error: .connectionClosed) == ClientPoolActions(close: id))
        // The next request opens a fresh connection rather than writing on the closed one.
        let next = try opened(pool.submit(2, key: shared, addressCount: 1), for: 2)
        #expect(next != id)
    }

    @Test func aStaleParkedConnectionHandsItsUnsentRequestToAnotherConnection() throws {
        var pool = machine(limit: 2)
        let a = try opened(pool.submit(1, key: shared, addressCount: 1), for: 1)
        let b = try opened(pool.submit(2, key: shared, addressCount: 1), for: 2)
        _ = pool.connected(a, now: 0)
        _ = pool.connected(b, now: 0)
        _ = pool.responseReceived(on: a, reusable: true, now: 1)
        _ = pool.responseReceived(on: b, reusable: true, now: 2)
        // Most recently parked first: b, found closed, then a, found closed, then a new connection.
        #expect(pool.submit(3, key: shared, addressCount: 1) == ClientPoolActions(next: .write(3, on: b, reused: true)))
        #expect(pool.staleConnection(b) == ClientPoolActions(close: b, next: .write(3, on: a, reused: true)))
        let stale = pool.staleConnection(a)
        #expect(stale.close == a)
        #expect(stale.fail == nil)
        let fresh = try opened(stale, for: 3)
        #expect(pool.connected(fresh, now: 3) == ClientPoolActions(next: .write(3, on: fresh, reused: false)))
        #expect(pool.openConnectionCount == 1)
    }

    @Test func aDeadlineClosesTheRequestsConnectionAndFreesItsSlot() throws {
        var pool = machine(limit: 1)
        let id = try opened(pool.submit(1, key: shared, addressCount: 1), for: 1)
        _ = pool.submit(2, key: shared, addressCount: 1)
        _ = pool.connected(id, now: 0)
        let actions = pool.requestEnded(1, error: .timedOut)
        #expect(actions.fail == .init(1, .timedOut))
        #expect(actions.close == id)
        _ = try opened(actions, for: 2)
        // A request that already ended ends nothing more.
        #expect(pool.requestEnded(1, error: .cancelled) == .none)
    }

    @Test func aCancelledWaitingRequestIsSkippedWhenAConnectionFrees() throws {
        var pool = machine(limit: 1)
        let id = try opened(pool.submit(1, key: shared, addressCount: 1), for: 1)
        _ = pool.submit(2, key: shared, addressCount: 1)
        _ = pool.submit(3, key: shared, addressCount: 1)
        #expect(pool.requestEnded(2, error: .cancelled) == ClientPoolActions(fail: .init(2, .cancelled)))
        _ = pool.connected(id, now: 0)
        #expect(
            pool.responseReceived(on: id, reusable: true, now: 1)
                == ClientPoolActions(next: .write(3, on: id, reused: true)))
    }

    @Test func theIdleTimerClosesOnlyAConnectionIdleForTheWholeTimeout() throws {
        var pool = machine()
        let id = try opened(pool.submit(1, key: shared, addressCount: 1), for: 1)
        _ = pool.connected(id, now: 0)
        _ = pool.responseReceived(on: id, reusable: true, now: 10)
        _ = pool.submit(2, key: shared, addressCount: 1)
        _ = pool.responseReceived(on: id, reusable: true, now: 500)
        // The timer armed at 10 fires; the connection has been idle only since 500.
        #expect(
            pool.idleTimerFired(id, now: 10 + idleTimeout)
                == ClientPoolActions(next: .scheduleIdleTimer(id, at: 500 + idleTimeout)))
        #expect(pool.idleTimerFired(id, now: 500 + idleTimeout) == ClientPoolActions(close: id))
        #expect(pool.openConnectionCount == 0)
    }

    @Test func aPartitionHasItsOwnPoolOfOneConnection() throws {
        var pool = machine(limit: 8)
        let device = ClientPoolKey(host: "127.0.0.1", port: 8080, partition: "device-1")
        let id = try opened(pool.submit(1, key: device, addressCount: 1), for: 1)
        #expect(pool.submit(2, key: device, addressCount: 1) == .none)
        _ = try opened(pool.submit(3, key: shared, addressCount: 1), for: 3)
        #expect(pool.key(of: id) == device)
        _ = pool.connected(id, now: 0)
        #expect(
            pool.responseReceived(on: id, reusable: true, now: 1)
                == ClientPoolActions(next: .write(2, on: id, reused: true)))
    }

    @Test func aPartitionsPoolIsForgottenWhenItsLastConnectionCloses() throws {
        var pool = machine()
        let device = ClientPoolKey(host: "127.0.0.1", port: 8080, partition: "device-1")
        let first = try opened(pool.submit(1, key: device, addressCount: 1), for: 1)
        _ = pool.connected(first, now: 0)
        _ = pool.responseReceived(on: first, reusable: false, now: 1)
        #expect(pool.key(of: first) == nil)
        let second = try opened(pool.submit(2, key: device, addressCount: 1), for: 2)
        #expect(pool.key(of: second) == device)
    }

    @Test func shutdownFailsEveryPendingRequestAndClosesEveryConnection() throws {
        var pool = machine(limit: 1)
        let id = try opened(pool.submit(1, key: shared, addressCount: 1), for: 1)
        _ = pool.submit(2, key: shared, addressCount: 1)
        let (failed, closed) = pool.shutdown()
        #expect(Set(failed) == [1, 2])
        #expect(closed == [id])
        #expect(pool.pendingRequestCount == 0)
        #expect(pool.openConnectionCount == 0)
    }
}
