import Foundation

/// Starts an instance's own tasks (initialisation, background calls, back-off sleeps) on the
/// executor its transport declares (``OptoLinkTransportCapabilities``), where the OS has task
/// executors (iOS 18 / macOS 15; Linux always); elsewhere, and without one, on the global pool.
struct OptoLinkTaskStarter: Sendable {
    /// A `TaskExecutor`, type-erased so that this type exists below iOS 18; `nil`: the global pool.
    let executor: (any AnyObject & Sendable)?

    /// A task that never throws, started on the executor.
    @discardableResult
    func task(_ operation: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        if #available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *), let preferred {
            return Task(executorPreference: preferred, operation: operation)
        }
        return Task(operation: operation)
    }

    /// A throwing task, started on the executor.
    func throwingTask<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T)
        -> Task<T, any Error>
    {
        if #available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *), let preferred {
            return Task(executorPreference: preferred, operation: operation)
        }
        return Task(operation: operation)
    }

    @available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
    private var preferred: (any TaskExecutor)? {
        executor.flatMap { $0 as? any TaskExecutor }
    }
}
