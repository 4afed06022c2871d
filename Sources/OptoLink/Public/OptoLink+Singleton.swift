import Foundation

extension OptoLink {
    /// The singleton registry: the only global mutable state of the SDK.
    private struct Registry: Sendable {
        var instance: OptoLink?
        var initialization: Task<OptoLink, Never>?
    }

    private static let registry = LockedBox(Registry())

    /// Initialises the shared instance with the platform environment (seed 001).
    ///
    /// Idempotent and concurrency-safe: the first call creates and registers the instance
    /// (so ``instance()`` and ``handle(url:)`` work during the match) and starts one
    /// initialisation task; every caller, concurrent or later, awaits that same task and
    /// gets the same instance (a later call's config is ignored). Never throws: a network
    /// failure during the deferred match is logged.
    @discardableResult
    public static func initialize(config: OptoLinkConfig) async -> OptoLink {
        await initialize(config: config, environment: .system)
    }

    /// ``initialize(config:)`` with an explicit environment (additive API, e.g. a custom
    /// transport). The environment is used only by the call that creates the instance.
    @discardableResult
    public static func initialize(
        config: OptoLinkConfig,
        environment: @autoclosure () -> OptoLinkEnvironment
    ) async -> OptoLink {
        let initialization = registry.withLock { registry -> Task<OptoLink, Never> in
            if let initialization = registry.initialization { return initialization }
            let instance = OptoLink(config: config, environment: environment())
            registry.instance = instance
            let initialization = Task {
                await instance.start()
                return instance
            }
            registry.initialization = initialization
            return initialization
        }
        return await initialization.value
    }

    /// The shared instance; available as soon as ``initialize(config:)`` has been called
    /// (also while it is still running). Calling it earlier is a programmer error.
    public static func instance() -> OptoLink {
        guard let instance = registry.withLock({ $0.instance }) else {
            preconditionFailure("OptoLink.instance() called before OptoLink.initialize(config:)")
        }
        return instance
    }

    /// The shared instance, or `nil` before ``initialize(config:)`` (additive API).
    public static var current: OptoLink? {
        registry.withLock { $0.instance }
    }

    /// Forgets `instance` if it is the registered singleton.
    static func unregister(_ instance: OptoLink) {
        registry.withLock { registry in
            if registry.instance === instance { registry = Registry() }
        }
    }
}
