import Foundation

/// Tasks parked until a condition on some lock-guarded state holds (a number of sleepers, of
/// requests, a pending sleep of some length). Lives inside the state it watches; see
/// ``TestLock/wait(until:)``.
struct ConditionWaiters<Value>: Sendable {
    private struct Waiter: Sendable {
        let condition: @Sendable (Value) -> Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    private var nextId: UInt64 = 0
    private var waiters: [UInt64: Waiter] = [:]

    init() {}

    mutating func reserveId() -> UInt64 {
        nextId += 1
        return nextId
    }

    mutating func add(
        _ id: UInt64, _ condition: @escaping @Sendable (Value) -> Bool, _ continuation: CheckedContinuation<Void, Never>
    ) {
        waiters[id] = Waiter(condition: condition, continuation: continuation)
    }

    mutating func remove(_ id: UInt64) -> CheckedContinuation<Void, Never>? {
        waiters.removeValue(forKey: id)?.continuation
    }

    /// Removes and returns the waiters whose condition `value` meets; resume them outside the lock.
    mutating func takeSatisfied(by value: Value) -> [CheckedContinuation<Void, Never>] {
        guard !waiters.isEmpty else { return [] }
        let ready = waiters.filter { $0.value.condition(value) }
        for id in ready.keys { waiters.removeValue(forKey: id) }
        return ready.values.map(\.continuation)
    }
}

/// State that parks waiters on conditions over itself.
protocol WaitableState: Sendable {
    var waiters: ConditionWaiters<Self> { get set }
}

extension WaitableState {
    /// Takes the waiters the current state satisfies; call after every change, resume outside the lock.
    mutating func takeSatisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
        var waiters = self.waiters
        self.waiters = ConditionWaiters()
        defer { self.waiters = waiters }
        return waiters.takeSatisfied(by: self)
    }
}

extension TestLock where Value: WaitableState {
    /// Suspends until `condition` holds for the guarded state (checked now and after each change
    /// the owner reports through ``WaitableState/takeSatisfiedWaiters()``), or until the waiting
    /// task is cancelled, whichever comes first: a test's time limit can always end the wait.
    func wait(until condition: @escaping @Sendable (Value) -> Bool) async {
        let id = withLock { $0.waiters.reserveId() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let parked = withLock { state -> Bool in
                    // Checked under the lock: a cancellation after this point finds the waiter registered.
                    if Task.isCancelled || condition(state) { return false }
                    state.waiters.add(id, condition, continuation)
                    return true
                }
                if !parked { continuation.resume() }
            }
        } onCancel: {
            withLock { $0.waiters.remove(id) }?.resume()
        }
    }
}
