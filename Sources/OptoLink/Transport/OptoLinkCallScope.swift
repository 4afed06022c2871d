import Foundation

/// How ``OptoLink/dispose()`` cancels a public call that runs in its caller's own task, with no
/// task of its own (over a transport that declares ``OptoLinkTransportCapabilities/registersCallScope``
/// and ``OptoLinkTransportCapabilities/enforcesDeadline``).
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
/// The scope travels with the call: the public call hands it down to the retry loop, which puts
/// it in every attempt's ``OptoLinkRequestContext/callScope`` for the transport. Neither a
/// task-local value (binding one around an `async` operation costs about as much as a task of
/// its own) nor a process-wide table keyed by the running task (a lock both client loops would
/// take three times per call) is needed.
package struct OptoLinkCallScope: Sendable, Equatable {
    let owner: OptoLink
    let id: UInt64

    /// The same call of the same instance.
    package static func == (lhs: OptoLinkCallScope, rhs: OptoLinkCallScope) -> Bool {
        lhs.owner === rhs.owner && lhs.id == rhs.id
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
    package func sleep(for delay: OptoLinkDuration, on clock: any OptoLinkClock) async throws {
        let sleeper = owner.taskStarter.throwingTask { try await clock.sleep(for: delay) }
        register { sleeper.cancel() }
        try await withTaskCancellationHandler {
            try await sleeper.value
        } onCancel: {
            sleeper.cancel()
        }
    }
}
