import Foundation
import OptoLinkHTTP
import SoakSupport

/// The emulator's routes as one synchronous ``HTTPHandler``: the wire contract of docs/CONTRACT.md §1,
/// clicks and the match ladder (§4), AASA (§5), rate limits, faults, ledger and admin routes.
///
/// Thread-safe: state sits behind fine-grained mutexes (limiter, clicks, devices, ledger,
/// faults, counters). Time comes from the injected ``StagingClock``, so tests drive windows
/// in virtual time by calling ``handle(_:_:)`` directly.
///
/// Order of checks on a route (as NestJS runs them): body parsing (malformed JSON → 400,
/// before the throttler, like Express's body parser) → rate limit (429; every request that
/// reaches the guard counts, whatever its later outcome) → API key (401/403) → body
/// validation (400) → the handler (404/410/2xx). Faults drawn "before commit" answer before
/// any of these run and are not counted by the limiter.
public final class StagingBackend: Sendable {
    let configuration: StagingConfiguration
    let clock: StagingClock
    let fixtures: FixtureIndex
    let limiter: RateLimiter
    let clicks: ClickStore
    package let devices: DeviceRegistry
    let ledgerStore: StagingLedger
    let faults: FaultInjector
    let endpointCounters = EndpointCounters()
    let tokens: TokenGenerator
    /// The token `/__admin/*` requests must carry (`Authorization: Bearer <token>`); `nil` = open.
    let adminToken: String?

    /// Builds a backend over `configuration`, reading time from `clock`; with `adminToken`,
    /// admin requests without it get `401` (see ``adminRefusal(_:)``).
    public init(configuration: StagingConfiguration, clock: StagingClock = .system, adminToken: String? = nil) {
        self.configuration = configuration
        self.adminToken = adminToken
        self.clock = clock
        let now = clock.now()
        fixtures = FixtureIndex(
            configuration.fixtures, startedAt: now, rotationGraceSeconds: configuration.rotationGraceSeconds)
        limiter = RateLimiter(limits: configuration.limits)
        clicks = ClickStore(settings: configuration.match)
        devices = DeviceRegistry(idleSeconds: configuration.deviceIdleSeconds)
        ledgerStore = StagingLedger()
        faults = FaultInjector(configuration.faults, origin: now)
        tokens = TokenGenerator(seed: configuration.faults.seed ^ UInt64(bitPattern: Int64(now * 1000)))
    }

    /// Answers one request. Never blocks: latency faults come back as
    /// ``HTTPHandlerResult/respondAfter(_:delay:)``; a request inside an outage window comes
    /// back as ``HTTPHandlerResult/close`` (refuse) or ``HTTPHandlerResult/reset``.
    package func handle(_ request: HTTPRequest, _ connection: HTTPConnectionInfo) -> HTTPHandlerResult {
        let route = Route(method: request.method, path: request.path)
        let context = RequestContext(
            request: request, ip: clientIP(request, connection), now: clock.now(), endpoint: route.endpoint)
        let result: HTTPHandlerResult
        if let outage = faults.outage(route.endpoint, at: context.now) {
            endpointCounters.recordOutage(route.endpoint, outage.mode)
            result = outage.mode == .reset ? .reset : .close
        } else {
            result = answer(route, context)
        }
        endpointCounters.record(route.endpoint, status: result.status)
        return result
    }

    private func answer(_ route: Route, _ context: RequestContext) -> HTTPHandlerResult {
        switch route {
        case .admin(let admin): .respond(adminRefusal(context) ?? handleAdmin(admin, context))
        case .unknown: .respond(errorResponse(404, "Cannot \(context.request.method) \(context.path)", context))
        default: withFaults(context) { dispatch(route, $0) }
        }
    }

    /// Every accepted write so far, in arrival order (docs/CONTRACT.md §4, "Ledger").
    public func ledger() -> [StagingLedgerEntry] { ledgerStore.entries() }

    /// Ledger entries with `sequence > since`, at most `limit` (for incremental reads of long runs).
    public func ledger(since: Int, limit: Int = .max) -> [StagingLedgerEntry] {
        ledgerStore.entries(since: since, limit: limit)
    }

    /// Streams the ledger to a JSON-lines file (one ``StagingLedgerEntry`` per line) instead of
    /// keeping it in memory; the file is created or truncated, entries so far are moved there.
    /// Pages (``ledger(since:limit:)``) are then read back from the file.
    /// - Throws: when the file cannot be created.
    public func streamLedger(to url: URL) throws { try ledgerStore.streamToFile(url) }

    /// Calls `observer` with every ledger entry stored from now on (on the request's thread,
    /// right after it is stored), so an in-process reader follows the ledger live.
    public func observeLedger(_ observer: @escaping @Sendable (StagingLedgerEntry) -> Void) {
        ledgerStore.observe(observer)
    }

    /// What the emulator holds right now (ledger, clicks, devices, limiter keys).
    public func retained() -> StagingRetained {
        StagingRetained(
            ledgerInMemory: ledgerStore.inMemory, ledgerTotal: ledgerStore.count, clicks: clicks.count,
            devices: devices.count, limiterKeys: limiter.keyCount)
    }

    /// Writes buffered ledger lines to the ledger file; returns why writing failed, if it did.
    @discardableResult
    public func flushLedger() -> String? {
        ledgerStore.flush()
        return ledgerStore.fileFailure
    }

    /// Requests per endpoint by status and per-bucket window counters.
    public func counters() -> StagingCounters {
        StagingCounters(
            endpoints: endpointCounters.snapshot(), buckets: limiter.snapshot(mask: Self.maskBucketKey),
            faults: endpointCounters.faultSnapshot(), ledgerEntries: ledgerStore.count)
    }

    /// Replaces the fault rules while running; draws restart from the new seed and outage
    /// windows count from now.
    public func setFaults(_ faults: StagingFaults) { self.faults.set(faults, origin: clock.now()) }

    /// Counts outage windows from `epoch` (seconds since 1970) instead of from when the rules
    /// were set, e.g. from a soak run's start; the rules and their draws stay as they are.
    public func startOutageWindows(at epoch: Double) { faults.setOrigin(epoch) }

    /// The fault rules in force.
    public func currentFaults() -> StagingFaults { faults.current() }

    /// Replaces the rate limits while running.
    public func setLimits(_ limits: StagingLimits) { limiter.setLimits(limits) }

    /// Forgets the ledger, counters, limiter windows, clicks and devices (fixtures stay).
    public func reset() {
        ledgerStore.reset()
        endpointCounters.reset()
        limiter.reset()
        clicks.reset()
        devices.reset()
    }

    private func dispatch(_ route: Route, _ context: RequestContext) -> RouteOutcome {
        switch route {
        case .match: handleMatch(context)
        case .data(let org, let code): handleData(context, orgKey: org, shortCode: code)
        case .click(let org, let code): handleClick(context, orgKey: org, shortCode: code)
        case .session: handleSession(context)
        case .identity: handleIdentity(context)
        case .identityClear: handleIdentityClear(context)
        case .events: handleEvents(context)
        case .aasa: handleAASA(context)
        case .admin, .unknown:
            RouteOutcome(errorResponse(404, "Cannot \(context.request.method) \(context.path)", context))
        }
    }

    /// The client IP: the socket peer, or the first `X-Forwarded-For` address when trusted.
    func clientIP(_ request: HTTPRequest, _ connection: HTTPConnectionInfo) -> String {
        if configuration.trustForwardedFor, let forwarded = request.headers["X-Forwarded-For"] {
            let first =
                forwarded.split(separator: ",", maxSplits: 1).first.map { $0.trimmingCharacters(in: " \t") } ?? ""
            if !first.isEmpty { return first }
        }
        let peer = connection.peerAddress
        return peer.hasPrefix("::ffff:") ? String(peer.dropFirst(7)) : peer
    }

    /// Keys are never shown whole: their redaction (`SecretRedaction`), then `#` and a hash that
    /// tells two keys apart; IPs are shown as they are.
    static func maskBucketKey(_ bucket: StagingBucketClass, _ key: String) -> String {
        switch bucket {
        case .match, .data: key
        case .sdk, .events:
            key.hasPrefix("ip:") ? key : "\(SecretRedaction.redact(key))#\(String(fnv1a(key) & 0xFFFF_FFFF, radix: 16))"
        }
    }

    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01B3
        }
        return hash
    }
}

extension HTTPHandlerResult {
    /// The status the client sees; 0 for a reset, -1 for a close with no response.
    var status: Int {
        switch self {
        case .respond(let r), .respondAfter(let r, _): r.status
        case .reset: 0
        case .close: -1
        }
    }
}
