import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Start, single flight, cancellation and disposal of an instance (docs/CONTRACT.md §2, "Orchestration").
///
/// Every piece of work an instance does runs in a task it can reach: the initialisation
/// task, one task per public call, and the background tasks (session, link resolution).
/// Cancelling a caller cancels its work; ``dispose()`` cancels all of it. Cancelled work
/// sends no further request and ends its back-off sleep at once.
extension OptoLink {
    /// Runs this instance's initialisation (additive API): idempotent, concurrency-safe
    /// (every caller awaits the same run), never throws.
    ///
    /// On the first launch of the store it consumes the first-launch flag, runs one
    /// `POST /match` and emits a hit on ``links``; on a miss, a failure, or a later launch
    /// it sends the fire-and-forget `POST /sdk/session`. Then it releases the URL parked by
    /// ``handle(url:)``. docs/CONTRACT.md §2, "Orchestration".
    ///
    /// Cancellation: a cancelled caller stops waiting at once. When every caller still waiting
    /// has been cancelled, the initialisation itself is cancelled: its request or back-off
    /// sleep ends, no session call follows (the first-launch flag stays consumed), and the last
    /// caller returns once it has ended.
    public func start() async {
        let task = lifecycle.withLock { state -> Task<Void, Never> in
            state.startWaiters += 1
            if let task = state.startTask { return task }
            let task = taskStarter.task { await self.runStart() }
            state.startTask = task
            return task
        }
        await Self.wait(for: task, starter: taskStarter)
        let cancelled = Task.isCancelled
        let abandon = lifecycle.withLock { state -> Bool in
            state.startWaiters -= 1
            return cancelled && state.startWaiters == 0 && !state.startFinished
        }
        if abandon {
            // Its request or back-off sleep ends at once; return when it has, so no work of
            // this start() outlives the call.
            log.info("start: every caller was cancelled; cancelling the initialisation")
            task.cancel()
            await task.value
        }
    }

    /// Ends this instance (test/state reset): unregisters it if it is the singleton,
    /// cancels its initialisation, every public call still running (request or back-off
    /// sleep), the session call and link resolutions, and finishes its ``links`` streams.
    /// The persisted store is untouched; ``start()`` afterwards does nothing, and a public
    /// call afterwards throws ``OptoLinkConnectionError`` (`.cancelled`) without a request.
    public func dispose() {
        let cancels = lifecycle.withLock { state -> [@Sendable () -> Void] in
            state.disposed = true
            // The tasks stay registered until they end, so waitForBackgroundWork() can await them.
            let tasks = Array(state.background.values) + (state.startTask.map { [$0] } ?? [])
            return tasks.map { task in { task.cancel() } } + Array(state.calls.values)
        }
        for cancel in cancels { cancel() }
        broadcaster.finishAll()
        Self.unregister(self)
        log.info("disposed")
    }

    /// Waits until the background work started so far (session call, link resolutions) has
    /// finished, including work ``dispose()`` cancelled, which ends at once (additive API, for
    /// tests and the soak tester).
    public func waitForBackgroundWork() async {
        while let task = lifecycle.withLock({ $0.background.values.first }) {
            await task.value
        }
    }

    // MARK: - Internals

    /// Runs one public call in its own task, registered so ``dispose()`` can cancel it;
    /// cancelling the caller cancels it too. Over a transport that declares both
    /// ``OptoLinkTransportCapabilities/enforcesDeadline`` and
    /// ``OptoLinkTransportCapabilities/registersCallScope``, the call runs in the caller's task
    /// instead, as a scope `dispose()` cancels (``OptoLinkCallScope``).
    /// With `afterStart`, first waits for a running ``start()`` (single flight: telemetry must
    /// not overtake the deferred match). `operation` gets the call's scope, or `nil` when the
    /// call runs in a task of its own; it hands the scope on to the retry loop.
    /// `nonisolated(nonsending)` where the compiler has it (Swift 6.2), like the retry loop's `run`;
    /// the two branches of `#if compiler(>=6.2)` are the same code but for that modifier, which
    /// cannot itself sit inside an `#if` (Swift 6.0 does not parse it).
    ///
    /// - Throws: what `operation` throws; ``OptoLinkConnectionError`` (`.cancelled`) when the
    ///   instance is disposed or the caller is cancelled before the call begins.
    #if compiler(>=6.2)
        nonisolated(nonsending) func tracked<T: Sendable>(
            afterStart: Bool = true, _ operation: @escaping @Sendable (OptoLinkCallScope?) async throws -> T
        ) async throws -> T {
            if afterStart, let running = runningStart() {
                await Self.wait(for: running, starter: taskStarter)
            }
            if scopedCalls {
                let scope = try openScope()
                defer { closeCall(scope.id) }
                return try await operation(scope)
            }
            let (id, task) = try registerCall(operation)
            defer { closeCall(id) }
            return try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        }
    #else
        func tracked<T: Sendable>(
            afterStart: Bool = true, _ operation: @escaping @Sendable (OptoLinkCallScope?) async throws -> T
        ) async throws -> T {
            if afterStart, let running = runningStart() {
                await Self.wait(for: running, starter: taskStarter)
            }
            if scopedCalls {
                let scope = try openScope()
                defer { closeCall(scope.id) }
                return try await operation(scope)
            }
            let (id, task) = try registerCall(operation)
            defer { closeCall(id) }
            return try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        }
    #endif

    /// The initialisation task while it is still running, else `nil`.
    private func runningStart() -> Task<Void, Never>? {
        lifecycle.withLock { $0.startFinished ? nil : $0.startTask }
    }

    /// Starts `operation` in a task of its own, registered so that ``dispose()`` cancels it.
    ///
    /// - Throws: ``OptoLinkConnectionError`` (`.cancelled`) when the instance is disposed or the
    ///   caller is cancelled.
    private func registerCall<T: Sendable>(
        _ operation: @escaping @Sendable (OptoLinkCallScope?) async throws -> T
    ) throws -> (UInt64, Task<T, any Error>) {
        let starter = taskStarter
        let registered = lifecycle.withLock { state -> (UInt64, Task<T, any Error>)? in
            guard !state.disposed, !Task.isCancelled else { return nil }
            state.nextBackgroundId += 1
            let id = state.nextBackgroundId
            let task = starter.throwingTask { try await operation(nil) }
            state.calls[id] = { task.cancel() }
            return (id, task)
        }
        guard let registered else { throw OptoLinkConnectionError(underlying: URLError(.cancelled)) }
        return registered
    }

    /// Opens the ``OptoLinkCallScope`` of one public call that runs in the caller's task.
    ///
    /// - Throws: ``OptoLinkConnectionError`` (`.cancelled`) when the instance is disposed or the
    ///   caller is cancelled.
    private func openScope() throws -> OptoLinkCallScope {
        let id = lifecycle.withLock { state -> UInt64? in
            guard !state.disposed, !Task.isCancelled else { return nil }
            state.nextBackgroundId += 1
            return state.nextBackgroundId
        }
        guard let id else { throw OptoLinkConnectionError(underlying: URLError(.cancelled)) }
        return OptoLinkCallScope(owner: self, id: id)
    }

    /// Forgets the public call `id` (it has ended).
    private func closeCall(_ id: UInt64) {
        lifecycle.withLock { _ = $0.calls.removeValue(forKey: id) }
    }

    /// Marks the initialisation finished (called at the end of `runStart`).
    func markStartFinished() {
        lifecycle.withLock { $0.startFinished = true }
    }

    /// Waits for `task` to finish, or returns as soon as the calling task is cancelled
    /// (whichever comes first); `task` itself is not cancelled. The waiting task starts on `starter`.
    static func wait(for task: Task<Void, Never>, starter: OptoLinkTaskStarter) async {
        let once = OptoLinkCancellationShield.Once<Void>()
        try? await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                once.attach(continuation)
                starter.task {
                    await task.value
                    once.finish(.success(()))
                }
            }
        } onCancel: {
            once.finish(.failure(CancellationError()))
        }
    }
}
