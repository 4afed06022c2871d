import Foundation

extension OptoLinkEnvironment {
    /// The environment of the singleton (docs/CONTRACT.md §3).
    ///
    /// Apple platforms: the UserDefaults suite `optolink_sdk`; `UIPasteboard.general` where
    /// UIKit exists. Elsewhere (Linux): one process-wide in-memory store and pasteboard.
    /// Always: ``OptoLinkDeviceInfo/current``, ``URLSessionTransport/shared``,
    /// ``OptoLinkSystemClock``, the contract retry policy.
    public static var system: OptoLinkEnvironment {
        OptoLinkEnvironment(
            store: systemStore,
            pasteboard: systemPasteboard,
            deviceInfo: .current,
            transport: URLSessionTransport.shared)
    }

    /// An isolated environment with an in-memory store and pasteboard (additive API):
    /// one per virtual device in tests and the soak tester. Share `transport` across them.
    ///
    /// - Parameters:
    ///   - transport: sends every attempt (share one across instances).
    ///   - deviceInfo: the fingerprint `POST /match` sends (default: this machine's).
    ///   - clipboard: the initial pasteboard content (e.g. a click token), or `nil`.
    ///   - store: pass the previous launch's store to simulate a relaunch.
    ///   - middlewares: wrap every attempt, first one outermost (e.g. a recorder).
    ///   - clock: every back-off, `Retry-After` wait and per-attempt deadline sleeps on it.
    ///   - retryPolicy: the retry matrix (default: the contract's, docs/CONTRACT.md §2).
    ///   - label: names the instance in ``OptoLinkRequestContext/instanceLabel`` (a virtual device id).
    ///   - wallClock: dates route-cache entries (default `Date()`).
    public static func inMemory(
        transport: any OptoLinkTransport,
        deviceInfo: OptoLinkDeviceInfo = .current,
        clipboard: String? = nil,
        store: any OptoLinkKeyValueStore = InMemoryKeyValueStore(),
        middlewares: [any OptoLinkMiddleware] = [],
        clock: any OptoLinkClock = OptoLinkSystemClock(),
        retryPolicy: any OptoLinkRetryPolicy = OptoLinkContractRetryPolicy(),
        label: String? = nil,
        wallClock: @escaping @Sendable () -> Date = { Date() }
    ) -> OptoLinkEnvironment {
        inMemory(
            transport: transport, deviceInfo: deviceInfo, pasteboard: InMemoryPasteboard(clipboard), store: store,
            middlewares: middlewares, clock: clock, retryPolicy: retryPolicy, label: label, wallClock: wallClock)
    }

    /// An isolated in-memory environment that reads and clears `pasteboard` (a spy, or one shared
    /// with a simulated browser) instead of a fresh in-memory one (additive API).
    ///
    /// Same as ``inMemory(transport:deviceInfo:clipboard:store:middlewares:clock:retryPolicy:label:wallClock:)``
    /// except for the pasteboard, which the deferred match reads once in the first-launch window and
    /// clears only after a hit (docs/CONTRACT.md §2, "Deferred match").
    ///
    /// - Parameters:
    ///   - transport: sends every attempt (share one across instances).
    ///   - deviceInfo: the fingerprint `POST /match` sends (default: this machine's).
    ///   - pasteboard: the clipboard this instance sees.
    ///   - store: pass the previous launch's store to simulate a relaunch.
    ///   - middlewares: wrap every attempt, first one outermost (e.g. a recorder).
    ///   - clock: every back-off, `Retry-After` wait and per-attempt deadline sleeps on it.
    ///   - retryPolicy: the retry matrix (default: the contract's, docs/CONTRACT.md §2).
    ///   - label: names the instance in ``OptoLinkRequestContext/instanceLabel`` (a virtual device id).
    ///   - wallClock: dates route-cache entries (default `Date()`).
    public static func inMemory(
        transport: any OptoLinkTransport,
        deviceInfo: OptoLinkDeviceInfo = .current,
        pasteboard: any OptoLinkPasteboard,
        store: any OptoLinkKeyValueStore = InMemoryKeyValueStore(),
        middlewares: [any OptoLinkMiddleware] = [],
        clock: any OptoLinkClock = OptoLinkSystemClock(),
        retryPolicy: any OptoLinkRetryPolicy = OptoLinkContractRetryPolicy(),
        label: String? = nil,
        wallClock: @escaping @Sendable () -> Date = { Date() }
    ) -> OptoLinkEnvironment {
        OptoLinkEnvironment(
            store: store, pasteboard: pasteboard, deviceInfo: deviceInfo,
            transport: transport, middlewares: middlewares, clock: clock, retryPolicy: retryPolicy, label: label,
            wallClock: wallClock)
    }

    #if canImport(Darwin)
        private static var systemStore: any OptoLinkKeyValueStore { UserDefaultsKeyValueStore.shared }
    #else
        private static let processStore = InMemoryKeyValueStore()
        private static var systemStore: any OptoLinkKeyValueStore { processStore }
    #endif

    #if canImport(UIKit)
        private static var systemPasteboard: any OptoLinkPasteboard { GeneralPasteboard() }
    #else
        private static let processPasteboard = InMemoryPasteboard()
        private static var systemPasteboard: any OptoLinkPasteboard { processPasteboard }
    #endif
}
