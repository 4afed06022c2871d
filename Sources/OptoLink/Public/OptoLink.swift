import Foundation

/// The OptoLink SDK entry point (seed 001): deferred deep links, Universal Link
/// resolution, device session, identity and events.
///
/// Apps use the singleton: ``initialize(config:)`` once, then ``instance()``. Tests and the
/// soak tester create isolated instances with ``init(config:environment:)`` and
/// ``start()``; one instance is one app launch, a relaunch is a new instance over the same
/// store. An instance owns no threads, sessions or long-lived tasks: the only tasks it
/// starts are the initialisation task, one task per public call (none over the soak tester's
/// native transport, which lets a call be cancelled in its caller's task), the fire-and-forget
/// `/sdk/session` call and Universal Link resolutions, each of which ends with its HTTP
/// call; ``dispose()`` cancels every one still running.
public final class OptoLink: Sendable {
    /// The persisted install id (UUID v4, lowercase), created on first use of the store.
    public let deviceId: String
    /// The configuration this instance was created with.
    public let config: OptoLinkConfig

    static let deviceIdKey = "deviceId"
    static let firstLaunchDoneKey = "firstLaunchDone"

    let environment: OptoLinkEnvironment
    let log: OptoLinkLog
    let api: OptoLinkAPIClient
    /// The `/sdk/*` calls of this instance (made once: every telemetry call captures it).
    let telemetry: TelemetryClient
    /// The opt-in route cache (``OptoLinkConfig/routeCache``); `nil` when off.
    let routeCache: RouteCache?
    let broadcaster = LinkBroadcaster()
    let parking = LinkParking()
    let lifecycle = LockedBox(Lifecycle())
    /// Whether public calls run in their caller's task (``OptoLinkCallScope``): the transport
    /// enforces the attempt deadline and registers its in-flight requests with the call's scope.
    package let scopedCalls: Bool
    /// Starts this instance's own tasks on the executor its transport declares.
    let taskStarter: OptoLinkTaskStarter

    struct Lifecycle: Sendable {
        var startTask: Task<Void, Never>?
        /// Callers of ``start()`` still awaiting `startTask`.
        var startWaiters = 0
        var startFinished = false
        var background: [UInt64: Task<Void, Never>] = [:]
        /// Cancels each public call still running (see `tracked(_:)`).
        var calls: [UInt64: @Sendable () -> Void] = [:]
        var nextBackgroundId: UInt64 = 0
        var disposed = false
    }

    /// Creates an isolated, non-singleton instance (additive API, docs/CONTRACT.md §2).
    ///
    /// Synchronous and free of network I/O: reads the persisted `deviceId` from
    /// `environment.store`, or creates and stores a new UUID v4. Call ``start()`` to run
    /// the first-launch orchestration.
    public init(config: OptoLinkConfig, environment: OptoLinkEnvironment) {
        self.config = config
        self.environment = environment
        // Only where every attempt runs in the calling task (no deadline race in a child task).
        let capabilities = environment.transportCapabilities
        scopedCalls = capabilities.runsCallsInCallerTask
        taskStarter = capabilities.taskStarter
        let log = OptoLinkLog(logger: config.logger)
        self.log = log
        if let stored = environment.store.string(forKey: Self.deviceIdKey), !stored.isEmpty {
            deviceId = stored
        } else {
            deviceId = UUID().uuidString.lowercased()
            environment.store.setString(deviceId, forKey: Self.deviceIdKey)
        }
        api = OptoLinkAPIClient(config: config, environment: environment, log: log)
        telemetry = TelemetryClient(api: api, deviceId: deviceId, deviceInfo: environment.deviceInfo)
        routeCache =
            config.routeCache
            ? RouteCache(
                store: environment.store, maxAge: config.routeCacheMaxAge, maxEntries: config.routeCacheMaxEntries,
                now: environment.wallClock, log: log)
            : nil
    }

    /// A fresh stream of links: replays the last link, then forwards live ones. Never
    /// errors; finishes only after ``dispose()``. docs/CONTRACT.md §2, "links".
    public var links: AsyncStream<OptoLinkData> {
        broadcaster.subscribe()
    }

    /// The link a new ``links`` stream would replay first: the last one emitted, or `nil`
    /// when none has been (additive API, docs/CONTRACT.md §2, "links").
    ///
    /// The first launch's deferred match emits before ``start()`` returns, so right after
    /// it this is the deferred link, or `nil` when the match found none; a Universal Link
    /// handed to ``handle(url:)`` arrives later, once its `/data` resolution ends.
    public var lastLink: OptoLinkData? {
        broadcaster.last
    }

    /// The single ingestion point for Universal Links and custom-scheme URLs.
    ///
    /// Before initialisation finishes the URL is parked (latest wins) and processed after
    /// the deferred emission. `https://{host}/{orgKey}/{shortCode}` with the configured org
    /// resolves through `/data` in a short task; anything else is emitted raw at once.
    ///
    /// When the resolution fails, ``links`` still gets exactly one link for the URL, and the
    /// app falls back in three layers: (1) a `.raw` link carries the URL's own path and query,
    /// so routing parameters the app put on its links still work offline; (2) with
    /// ``OptoLinkConfig/routeCache`` on, a failure that says nothing about the link (no
    /// connection, timeout, 5xx, 429) emits the route cached from an earlier success, marked
    /// ``OptoLinkData/Source/cached``; (3) with neither, the app opens its default screen.
    /// A 404 or 410 deletes the cached route and emits the raw link. The deferred match never
    /// falls back: its failure emits nothing, so it can never navigate.
    public func handle(url: URL) {
        if lifecycle.withLock({ $0.disposed }) {
            log.warning("handle(url:) after dispose(); ignored")
            return
        }
        if parking.park(url) {
            log.info("link: parked until initialisation finishes")
            return
        }
        process(url)
    }

    /// Re-runs the deferred match regardless of the first-launch flag (docs/CONTRACT.md §2,
    /// decision 10). The result is returned, not emitted on ``links``; a hit clears the
    /// clipboard.
    ///
    /// - Returns: the deferred link, or `nil` on a miss.
    /// - Throws: ``OptoLinkConnectionError`` when no response arrived within the budget
    ///   (`URLError(.cancelled)` when the caller is cancelled or ``dispose()`` runs;
    ///   `URLError(.cannotParseResponse)` when a 2xx body is not a match result);
    ///   ``OptoLinkApiError`` for a non-retryable status or the last retryable one.
    public func resolveDeferredLink() async throws -> OptoLinkData? {
        log.info("match: manual re-attempt (first-launch flag bypassed)")
        let matcher = self.matcher
        return try await tracked(afterStart: false) { scope in try await matcher.run(scope: scope) }
    }

    /// Binds this device to the app's user id: `POST /sdk/identity`. Telemetry retry class.
    ///
    /// Like every telemetry call, it first waits for a ``start()`` still running (single
    /// flight), so the backend knows the `deviceId` before the call arrives.
    /// - Throws: ``OptoLinkApiError`` (e.g. 404 unknown deviceId, 429 after the budget),
    ///   ``OptoLinkConnectionError`` (`URLError(.cancelled)` when the caller is cancelled or
    ///   ``dispose()`` runs, during a request or a back-off sleep).
    public func setIdentity(externalId: String) async throws {
        let telemetry = self.telemetry
        try await tracked { scope in try await telemetry.setIdentity(externalId: externalId, scope: scope) }
    }

    /// Unbinds the user from this device: `POST /sdk/identity/clear`. Telemetry retry class;
    /// waits for a running ``start()`` first.
    /// - Throws: ``OptoLinkApiError``, ``OptoLinkConnectionError`` (`.cancelled` as for ``setIdentity(externalId:)``).
    public func clearIdentity() async throws {
        let telemetry = self.telemetry
        try await tracked { scope in try await telemetry.clearIdentity(scope: scope) }
    }

    /// Records an event: `POST /sdk/events`. Telemetry retry class (never retried on 5xx);
    /// waits for a running ``start()`` first.
    /// - Parameters:
    ///   - name: the event name (non-empty, or the backend answers 400).
    ///   - properties: flat string map, at most 10240 bytes serialised (else 400).
    /// - Throws: ``OptoLinkApiError``, ``OptoLinkConnectionError`` (`.cancelled` as for ``setIdentity(externalId:)``).
    public func trackEvent(name: String, properties: [String: String] = [:]) async throws {
        let telemetry = self.telemetry
        try await tracked { scope in try await telemetry.trackEvent(name: name, properties: properties, scope: scope) }
    }

    // MARK: - Internals

    var matcher: DeferredMatcher {
        DeferredMatcher(
            api: api, pasteboard: environment.pasteboard, deviceInfo: environment.deviceInfo,
            deviceId: deviceId, clipboardEnabled: config.clipboardEnabled, log: log)
    }

    func runStart() async {
        defer { markStartFinished() }
        if lifecycle.withLock({ $0.disposed }) {
            log.warning("start() after dispose(); nothing to do")
            return
        }
        let store = environment.store
        let isFirstLaunch = !store.bool(forKey: Self.firstLaunchDoneKey)
        if log.isEnabled {
            log.info(
                "start: org \(config.orgKey), key \(OptoLinkLog.redacted(apiKey: config.apiKey)), "
                    + "deviceId \(deviceId), first launch \(isFirstLaunch)")
        }
        if isFirstLaunch {
            // Consumed regardless of outcome (docs/CONTRACT.md §2): mark before the call so that no
            // later launch repeats it, even if this one is cancelled mid-match.
            store.setBool(true, forKey: Self.firstLaunchDoneKey)
            log.info("start: first-launch flag consumed; running the deferred match")
            do {
                if let link = try await matcher.run() {
                    broadcaster.emit(link)
                    log.info("start: deferred link emitted; no session call")
                } else {
                    startSession()
                }
            } catch {
                if Task.isCancelled {
                    // Cancelled by the caller or dispose(): no session call, nothing more goes out.
                    log.info("start: cancelled during the deferred match; no session call")
                    return
                }
                log.warning("start: deferred match failed; resolveDeferredLink() can retry it", error: error)
                startSession()
            }
        } else if !Task.isCancelled {
            log.info("start: not a first launch; skipping /match")
            startSession()
        }
        if let parked = parking.open() {
            log.info("start: processing the parked link")
            process(parked)
        }
    }

    /// Fire-and-forget `POST /sdk/session` (never retried by the contract policy; logged).
    private func startSession() {
        let telemetry = self.telemetry
        let log = self.log
        let callId = api.nextCallId()
        log.info("session: check-in started (fire-and-forget)")
        spawn {
            do {
                try await telemetry.session(callId: callId)
                log.info("session: check-in done")
            } catch {
                log.warning("session: check-in failed; the next launch retries", error: error)
            }
        }
    }

    private func process(_ url: URL) {
        switch IncomingLink.classify(url, orgKey: config.orgKey) {
        case .raw:
            log.info("link: not a Universal Link of this org; emitting raw")
            broadcaster.emit(IncomingLink.rawData(for: url))
        case .universal(let shortCode):
            let resolver = LinkResolver(
                api: api, orgKey: config.orgKey, deviceId: deviceId, log: log, cache: routeCache)
            let broadcaster = self.broadcaster
            spawn {
                let link = await resolver.resolve(url, shortCode: shortCode)
                if !Task.isCancelled { broadcaster.emit(link) }
            }
        }
    }

    /// Starts a short, tracked task (removed when done, cancelled by ``dispose()``).
    func spawn(_ work: @escaping @Sendable () async -> Void) {
        lifecycle.withLock { state in
            guard !state.disposed else { return }
            state.nextBackgroundId += 1
            let id = state.nextBackgroundId
            state.background[id] = taskStarter.task { [weak self] in
                await work()
                self?.lifecycle.withLock { _ = $0.background.removeValue(forKey: id) }
            }
        }
    }
}
