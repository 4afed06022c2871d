import Foundation

/// How ``OptoLink/dispose()`` cancels a public call that runs in its caller's own task, with no
/// task of its own (over an ``OptoLinkCallScopedTransport``).
///
/// A public call normally runs in a task of its own, so `dispose()` can cancel it without
/// cancelling the caller. Over a transport that registers its in-flight request here, and that
/// enforces the attempt deadline itself on the real clock (so each attempt runs in the calling
/// task, with no deadline race in a child task), the call instead runs in the caller's task while
/// this scope is ``current`` for that task. The scope is the call's entry in its instance's
/// registry of running calls: the transport puts there the function that cancels its request
/// (``register(_:)``), `dispose()` runs it, and the retry loop, seeing the instance disposed
/// (``isCancelled``), starts no further attempt and cuts a back-off sleep short
/// (``sleep(for:on:)``). Cancelling the caller still cancels the call, as task cancellation does.
///
/// The current scope is found by the running task's identity in a process-wide table rather than
/// as a task-local value: binding a task-local value around an `async` operation cost about as much
/// as the task it replaces (measured, `Benchmarks/peers.md`).
package struct OptoLinkCallScope: Sendable {
    let owner: OptoLink
    let id: UInt64

    /// Running task (its identity) → the scope of the public call it runs.
    private static let running = LockedBox<[Int: OptoLinkCallScope]>([:])

    /// The scope of the public call running in this task, if it runs in one.
    package static var current: OptoLinkCallScope? {
        guard let key = taskKey else { return nil }
        return running.withLock { $0[key] }
    }

    /// The running task's identity (stable while it runs), `nil` outside a task.
    private static var taskKey: Int? { withUnsafeCurrentTask { $0?.hashValue } }

    /// Runs `operation` in this task with `self` as ``current``, then restores what was current.
    func run<T>(_ operation: () async throws -> T) async rethrows -> T {
        guard let key = Self.taskKey else { return try await operation() }
        let previous = Self.running.withLock { table in
            defer { table[key] = self }
            return table[key]
        }
        defer { Self.running.withLock { $0[key] = previous } }
        return try await operation()
    }

    /// Whether the instance has been disposed (the call is cancelled).
    package var isCancelled: Bool { owner.lifecycle.withLock { $0.disposed } }

    /// Makes `cancel` what `dispose()` runs for this call, replacing what the previous attempt
    /// registered (running a finished request's cancel does nothing); runs it at once when the
    /// instance is already disposed.
    package func register(_ cancel: @escaping @Sendable () -> Void) {
        let disposed = owner.lifecycle.withLock { state -> Bool in
            guard !state.disposed else { return true }
            state.calls[id] = cancel
            return false
        }
        if disposed { cancel() }
    }

    /// Sleeps `delay` on `clock`, ended early by `dispose()` or by cancelling the caller.
    ///
    /// - Throws: `CancellationError` when cut short.
    package func sleep(for delay: Duration, on clock: any Clock<Duration>) async throws {
        let sleeper = Task(executorPreference: owner.environment.taskExecutor) { try await clock.sleep(for: delay) }
        register { sleeper.cancel() }
        try await withTaskCancellationHandler {
            try await sleeper.value
        } onCancel: {
            sleeper.cancel()
        }
    }
}

/// A transport whose `send` registers its in-flight request with ``OptoLinkCallScope/current``
/// (when there is one), so that `dispose()` ends the request at once with `URLError(.cancelled)`,
/// as cancelling the calling task does. Public calls over such a transport that is also an
/// ``OptoLinkSelfTimedTransport``, on `ContinuousClock`, run in their caller's task instead of a
/// task of their own (``OptoLinkCallScope``).
package protocol OptoLinkCallScopedTransport: OptoLinkTransport {}
