import Foundation

/// The OptoLink SDK entry point (seed 001): deferred deep links, Universal Link
/// resolution, device session, identity and events.
///
/// Apps use the singleton: ``initialize(config:)`` once, then ``instance()``. Tests and the
/// soak tester create isolated instances with ``init(config:environment:)`` and
/// ``start()``; one instance is one app launch, a relaunch is a new instance over the same
/// store. An instance owns no threads, sessions or long-lived tasks: the only tasks it
/// starts are the initialisation task, the fire-and-forget `/sdk/session` call and
/// Universal Link resolutions, each of which ends with its HTTP call; ``dispose()``
/// cancels those still running.
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
    /// The opt-in route cache (``OptoLinkConfig/routeCache``); `nil` when off.
    let routeCache: RouteCache?
    let broadcaster = LinkBroadcaster()
    let parking = LinkParking()
    let lifecycle = LockedBox(Lifecycle())

    struct Lifecycle: Sendable {
        var startTask: Task<Void, Never>?
        var background: [UInt64: Task<Void, Never>] = [:]
        var nextBackgroundId: UInt64 = 0
        var disposed = false
    }

    /// Creates an isolated, non-singleton instance (additive API, CONTRACT §2).
    ///
    /// Synchronous and free of network I/O: reads the persisted `deviceId` from
    /// `environment.store`, or creates and stores a new UUID v4. Call ``start()`` to run
    /// the first-launch orchestration.
    public init(config: OptoLinkConfig, environment: OptoLinkEnvironment) {
        self.config = config
        self.environment = environment
        let log = OptoLinkLog(logger: config.logger)
        self.log = log
        if let stored = environment.store.string(forKey: Self.deviceIdKey), !stored.isEmpty {
            deviceId = stored
        } else {
            deviceId = UUID().uuidString.lowercased()
            environment.store.setString(deviceId, forKey: Self.deviceIdKey)
        }
        api = OptoLinkAPIClient(config: config, environment: environment, log: log)
        routeCache =
            config.routeCache
            ? RouteCache(
                store: environment.store, maxAge: config.routeCacheMaxAge, maxEntries: config.routeCacheMaxEntries,
                now: environment.wallClock, log: log)
            : nil
    }

    /// Runs this instance's initialisation (additive API): idempotent, concurrency-safe
    /// (every caller awaits the same run), never throws.
    ///
    /// On the first launch of the store it consumes the first-launch flag, runs one
    /// `POST /match` and emits a hit on ``links``; on a miss, a failure, or a later launch
    /// it sends the fire-and-forget `POST /sdk/session`. Then it releases the URL parked by
    /// ``handle(url:)``. CONTRACT §2, "Orchestration".
    public func start() async {
        let task = lifecycle.withLock { state -> Task<Void, Never> in
            if let task = state.startTask { return task }
            let task = Task { await self.runStart() }
            state.startTask = task
            return task
        }
        await task.value
    }

    /// A fresh stream of links: replays the last link, then forwards live ones. Never
    /// errors; finishes only after ``dispose()``. CONTRACT §2, "links".
    public var links: AsyncStream<OptoLinkData> {
        broadcaster.subscribe()
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

    /// Re-runs the deferred match regardless of the first-launch flag (CONTRACT §2,
    /// decision 10). The result is returned, not emitted on ``links``; a hit clears the
    /// clipboard.
    ///
    /// - Returns: the deferred link, or `nil` on a miss.
    /// - Throws: ``OptoLinkConnectionError`` when no response arrived within the budget;
    ///   ``OptoLinkApiError`` for a non-retryable status or the last retryable one.
    public func resolveDeferredLink() async throws -> OptoLinkData? {
        log.info("match: manual re-attempt (first-launch flag bypassed)")
        return try await matcher.run()
    }

    /// Binds this device to the app's user id: `POST /sdk/identity`. Telemetry retry class.
    /// - Throws: ``OptoLinkApiError`` (e.g. 404 unknown deviceId, 429 after the budget),
    ///   ``OptoLinkConnectionError``.
    public func setIdentity(externalId: String) async throws {
        try await telemetry.setIdentity(externalId: externalId)
    }

    /// Unbinds the user from this device: `POST /sdk/identity/clear`. Telemetry retry class.
    /// - Throws: ``OptoLinkApiError``, ``OptoLinkConnectionError``.
    public func clearIdentity() async throws {
        try await telemetry.clearIdentity()
    }

    /// Records an event: `POST /sdk/events`. Telemetry retry class (never retried on 5xx).
    /// - Parameters:
    ///   - name: the event name (non-empty, or the backend answers 400).
    ///   - properties: flat string map, at most 10240 bytes serialised (else 400).
    /// - Throws: ``OptoLinkApiError``, ``OptoLinkConnectionError``.
    public func trackEvent(name: String, properties: [String: String] = [:]) async throws {
        try await telemetry.trackEvent(name: name, properties: properties)
    }

    /// Ends this instance (test/state reset): unregisters it if it is the singleton,
    /// cancels its running initialisation, session and resolution tasks, and finishes its
    /// ``links`` streams. The persisted store is untouched; ``start()`` afterwards does nothing.
    public func dispose() {
        let tasks = lifecycle.withLock { state -> [Task<Void, Never>] in
            state.disposed = true
            defer { state.background = [:] }
            return Array(state.background.values) + (state.startTask.map { [$0] } ?? [])
        }
        for task in tasks { task.cancel() }
        broadcaster.finishAll()
        Self.unregister(self)
        log.info("disposed")
    }

    /// Waits until the background work started so far (session call, link resolutions) has
    /// finished (additive API, for tests and the soak tester).
    public func waitForBackgroundWork() async {
        while let task = lifecycle.withLock({ $0.background.values.first }) {
            await task.value
        }
    }

    // MARK: - Internals

    var matcher: DeferredMatcher {
        DeferredMatcher(
            api: api, pasteboard: environment.pasteboard, deviceInfo: environment.deviceInfo,
            deviceId: deviceId, clipboardEnabled: config.clipboardEnabled, log: log)
    }

    var telemetry: TelemetryClient {
        TelemetryClient(api: api, deviceId: deviceId, deviceInfo: environment.deviceInfo)
    }

    private func runStart() async {
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
            // Consumed regardless of outcome (CONTRACT §2): mark before the call so that no
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
                log.warning("start: deferred match failed; resolveDeferredLink() can retry it", error: error)
                startSession()
            }
        } else {
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
    private func spawn(_ work: @escaping @Sendable () async -> Void) {
        lifecycle.withLock { state in
            guard !state.disposed else { return }
            state.nextBackgroundId += 1
            let id = state.nextBackgroundId
            state.background[id] = Task { [weak self] in
                await work()
                self?.lifecycle.withLock { _ = $0.background.removeValue(forKey: id) }
            }
        }
    }
}
