import Foundation

/// Tasks waiting until some count (sleepers, requests) reaches a threshold. Lives inside
/// a ``TestLock``-guarded state; ``TestLock/wait(until:current:waiters:)`` parks a task.
struct CountWaiters: Sendable {
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    mutating func add(_ count: Int, _ continuation: CheckedContinuation<Void, Never>) {
        waiters.append((count, continuation))
    }

    /// Removes and returns the waiters satisfied by `current`; resume them outside the lock.
    mutating func takeSatisfied(by current: Int) -> [CheckedContinuation<Void, Never>] {
        let ready = waiters.filter { $0.count <= current }.map(\.continuation)
        waiters.removeAll { $0.count <= current }
        return ready
    }
}

extension TestLock {
    /// Suspends until `current(state) >= count`; the owner calls
    /// `CountWaiters.takeSatisfied(by:)` whenever the count grows.
    func wait(until count: Int, current: @escaping (Value) -> Int, waiters: WritableKeyPath<Value, CountWaiters>) async
    {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let satisfied = withLock { state in
                if current(state) >= count { return true }
                state[keyPath: waiters].add(count, continuation)
                return false
            }
            if satisfied { continuation.resume() }
        }
    }
}
