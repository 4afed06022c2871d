import Foundation

/// Everything an ``OptoLink`` instance depends on outside itself: storage, clipboard,
/// fingerprint source, HTTP transport, middlewares, clocks and retry policy
/// (docs/CONTRACT.md §3, "Platform seams").
///
/// The singleton uses ``OptoLinkEnvironment/system``. Tests and the soak tester build
/// one per virtual device with in-memory parts and a shared transport.
public struct OptoLinkEnvironment: Sendable {
    /// Holds `deviceId` and the first-launch flag.
    public var store: any OptoLinkKeyValueStore
    /// Read once in the first-launch window for a click token.
    public var pasteboard: any OptoLinkPasteboard
    /// The `/match` fingerprint.
    public var deviceInfo: OptoLinkDeviceInfo
    /// Sends every attempt. Share one across instances: it owns the connections.
    public var transport: any OptoLinkTransport
    /// Wrap every attempt, in array order (first = outermost).
    public var middlewares: [any OptoLinkMiddleware]
    /// Every back-off sleep and per-attempt deadline runs on this clock
    /// (``OptoLinkSystemClock`` by default; a virtual one in tests).
    public var clock: any OptoLinkClock
    /// Decides retries; the contract's matrix by default.
    public var retryPolicy: any OptoLinkRetryPolicy
    /// The wall-clock time, read only to date route-cache entries and judge their age
    /// (``OptoLinkConfig/routeCache``); `Date()` by default. The ``clock`` cannot serve here:
    /// its instants do not survive a relaunch.
    public var wallClock: @Sendable () -> Date
    /// A caller-chosen name carried into every ``OptoLinkRequestContext`` (e.g. a
    /// virtual device id). `nil` for the singleton.
    public var label: String?
    /// An environment from its parts; `middlewares` empty, ``OptoLinkSystemClock``, the contract
    /// retry policy, no label and `Date()` as the wall clock unless given.
    public init(
        store: any OptoLinkKeyValueStore,
        pasteboard: any OptoLinkPasteboard,
        deviceInfo: OptoLinkDeviceInfo,
        transport: any OptoLinkTransport,
        middlewares: [any OptoLinkMiddleware] = [],
        clock: any OptoLinkClock = OptoLinkSystemClock(),
        retryPolicy: any OptoLinkRetryPolicy = OptoLinkContractRetryPolicy(),
        label: String? = nil,
        wallClock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.pasteboard = pasteboard
        self.deviceInfo = deviceInfo
        self.transport = transport
        self.middlewares = middlewares
        self.clock = clock
        self.retryPolicy = retryPolicy
        self.label = label
        self.wallClock = wallClock
    }
}

extension OptoLinkEnvironment {
    /// What the transport declares it does itself (``OptoLinkTransport/capabilities``).
    var transportCapabilities: OptoLinkTransportCapabilities { transport.capabilities }
}
