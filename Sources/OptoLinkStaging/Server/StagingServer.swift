import Foundation
import OptoLinkHTTP
import SoakSupport

/// The embedded staging backend on a real socket: a ``StagingBackend`` served by an
/// ``HTTPServer`` (docs/CONTRACT.md §4). The one-call entry point for `optolink-soak serve` and for tests.
///
/// Lifecycle: `init` (no I/O) → ``start()`` (binds; then ``port``, ``baseURL``) → ``stop()``.
/// ``withStagingServer(_:clock:isolation:_:)`` does all three around a body.
public final class StagingServer: Sendable {
    /// The configuration the emulator runs with (its `port` may be 0; read ``port``).
    public let configuration: StagingConfiguration
    /// The routes and state; callable directly (no sockets) for in-process checks.
    public let backend: StagingBackend
    private let http: HTTPServer

    /// An emulator over `configuration`, reading time from `clock`, with the default HTTP server
    /// settings; `adminToken` locks `/__admin/*` behind `Authorization: Bearer <token>`.
    public convenience init(
        configuration: StagingConfiguration = .init(), clock: StagingClock = .system, adminToken: String? = nil
    ) {
        self.init(configuration: configuration, clock: clock, http: HTTPServer.Configuration(), adminToken: adminToken)
    }

    /// An emulator over `configuration`, reading time from `clock`.
    ///
    /// - Parameters:
    ///   - http: overrides the HTTP server settings (loops, timeouts, limits); its `host` and
    ///     `port` are replaced by the configuration's.
    ///   - adminToken: the token `/__admin/*` requests must carry as `Authorization: Bearer
    ///     <token>` (401 without it); `nil` leaves the admin routes open.
    package init(
        configuration: StagingConfiguration, clock: StagingClock,
        http httpConfiguration: HTTPServer.Configuration, adminToken: String? = nil
    ) {
        self.configuration = configuration
        let backend = StagingBackend(configuration: configuration, clock: clock, adminToken: adminToken)
        self.backend = backend
        var httpConfiguration = httpConfiguration
        httpConfiguration.host = configuration.host
        httpConfiguration.port = configuration.port
        http = HTTPServer(
            configuration: httpConfiguration, errorRenderer: { backend.protocolErrorResponse($0) }
        ) { request, connection in
            backend.handle(request, connection)
        }
    }

    /// Validates the configuration, binds and starts serving; returns once the port accepts.
    ///
    /// - Throws: ``StagingConfigurationError`` for an invalid configuration; `HTTPServerError`
    ///   when binding fails (address in use, bad host) or on a second call.
    public func start() async throws {
        let problems = configuration.problems()
        guard problems.isEmpty else {
            throw StagingConfigurationError(message: "configuration: " + problems.joined(separator: "; "))
        }
        try http.start()
    }

    /// Stops gracefully: in-flight and delayed answers get the HTTP server's shutdown grace.
    public func stop() async { await http.shutdown() }

    /// The bound TCP port (0 before ``start()``).
    public var port: Int { http.port }

    /// `http://127.0.0.1:<port>` (IPv6 hosts in brackets), the SDK's `baseUrl`.
    public var baseURL: URL {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        // A literal host and a numeric port always form a valid URL.
        return URL(string: "http://\(host):\(port)") ?? URL(fileURLWithPath: "/")
    }

    /// Every accepted write so far (docs/CONTRACT.md §4, "Ledger").
    public func ledger() -> [StagingLedgerEntry] { backend.ledger() }

    /// Requests per endpoint by status and per-bucket window counters.
    public func counters() -> StagingCounters { backend.counters() }

    /// Writes the ledger as a JSON array of ``StagingLedgerEntry`` (the `--ledger FILE`
    /// format) atomically: a temporary file in the same directory, then a rename.
    ///
    /// - Throws: the encoding or file-system error; an existing file is left untouched then.
    public func writeLedger(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(ledger()).write(to: url, options: .atomic)
    }

    /// `60` → `60s`, `0.5` → `0.5s`.
    private static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))s" : "\(value)s"
    }

    /// Lines for a console banner: where it listens, the rate limits in force, whether
    /// `X-Forwarded-For` is trusted, the org keys, API keys and link short codes it serves,
    /// the CLIENT key the `/sdk/*` routes take, the admin routes and a ready-to-paste curl
    /// example (`POST /match`).
    ///
    /// API keys show in their redacted form (a console is logged and shared like a report) unless
    /// `showKeys`; the banner then says where the whole keys are.
    public func summary(showKeys: Bool = false) -> [String] {
        let shown: (String) -> String = showKeys ? { $0 } : { SecretRedaction.redact($0) }
        var lines = ["OptoLink staging emulator on \(baseURL.absoluteString)"]
        let limits = configuration.limits
        lines.append(
            limits.enabled
                ? "rate limits (\(limits.algorithm.rawValue)): "
                    + StagingBucketClass.allCases.map {
                        // The bucket under the name its configuration and `expect.limits` use.
                        let name = $0 == .sdk ? "session_identity" : $0.rawValue
                        let rule = limits.rule(for: $0)
                        return "\(name) \(rule.limit)/\(Self.seconds(rule.windowSeconds))"
                    }.joined(separator: ", ")
                : "rate limits: off")
        lines.append(
            configuration.trustForwardedFor
                ? "client IP: first X-Forwarded-For address (X-Forwarded-For trusted)"
                : "client IP: socket peer (X-Forwarded-For not trusted; --trust-forwarded-for to change)")
        for org in configuration.fixtures.orgs {
            let keys = org.apiKeys.map { key in
                shown(key.key) + " (" + key.tier.rawValue + (key.revoked ? ", revoked" : "")
                    + (key.rotatedAt != nil || key.rotatedAgoSeconds != nil ? ", rotated" : "") + ")"
            }
            let links = org.links.map { $0.shortCode + ($0.active ? "" : " (inactive)") }
            lines.append(
                "org \(org.orgKey)\(org.active ? "" : " (suspended)"): keys \(keys.joined(separator: ", ")); links \(links.joined(separator: ", "))"
            )
        }
        let usable = configuration.fixtures.orgs.lazy.filter(\.active).flatMap { org in
            org.apiKeys.lazy.filter {
                $0.tier == .client && !$0.revoked && $0.rotatedAt == nil && $0.rotatedAgoSeconds == nil
            }
            .map { (org, $0) }
        }.first
        if let (org, key) = usable {
            lines.append("/sdk/* need: Authorization: Bearer \(shown(key.key))  (CLIENT key of org \(org.orgKey))")
            if let link = org.links.first(where: \.active) {
                lines.append("click a link: \(baseURL.absoluteString)/\(org.orgKey)/\(link.shortCode)")
            }
        }
        if !showKeys {
            lines.append(
                "keys are shown redacted: --show-keys prints them whole (they are the fixtures of --config FILE, "
                    + "else the defaults in Profiles/staging/README.md)")
        }
        let faulted = configuration.faults.endpoints.filter { !$0.value.isEmpty }.keys.sorted()
        if !faulted.isEmpty {
            lines.append("faults on: \(faulted.joined(separator: ", ")) (seed \(configuration.faults.seed))")
        }
        for outage in configuration.faults.outages {
            let scope = outage.endpoints?.joined(separator: ", ") ?? "every route but /__admin"
            let window = "from second \(outage.startSeconds) to \(outage.endSeconds) after start"
            lines.append("outage: \(outage.mode.rawValue) \(scope) \(window)")
        }
        lines.append(
            "admin: GET /__admin/ledger, GET /__admin/counters, PUT /__admin/faults, PUT /__admin/limits, POST /__admin/reset"
                + (backend.adminToken == nil
                    ? " (open: no admin token)" : " (need Authorization: Bearer <admin token>)")
        )
        lines.append(
            "try: curl -s -X POST \(baseURL.absoluteString)/match -H 'Content-Type: application/json' -d "
                + #"'{"platform":"iOS","osVersion":"18.1","deviceModel":"iPhone","language":"en-US","deviceId":"curl-device-1"}'"#
        )
        return lines
    }

    /// Connection-level counters of the HTTP server (bad requests, resets, timeouts).
    package func httpCounters() -> HTTPServer.Counters { http.counters() }

    /// Replaces the fault rules while running (also `PUT /__admin/faults`); outage windows count from now.
    public func setFaults(_ faults: StagingFaults) { backend.setFaults(faults) }

    /// Counts the outage windows of the rules in force from `epoch` (seconds since 1970), e.g.
    /// a soak run's start, without touching the rules or their draws.
    public func startOutageWindows(at epoch: Double) { backend.startOutageWindows(at: epoch) }

    /// Replaces the rate limits while running (also `PUT /__admin/limits`).
    public func setLimits(_ limits: StagingLimits) { backend.setLimits(limits) }
}

/// Runs `body` with a started emulator and stops it afterwards, whether `body` returns or throws.
///
/// - Throws: what ``StagingServer/start()`` throws (then `body` does not run), or what `body` throws.
public func withStagingServer<T>(
    _ configuration: StagingConfiguration = .init(),
    clock: StagingClock = .system,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (StagingServer) async throws -> T
) async throws -> T {
    try await withStagingServer(
        configuration, clock: clock, http: HTTPServer.Configuration(), isolation: isolation, body)
}

/// Runs `body` with a started emulator whose HTTP server uses `http`, and stops it afterwards.
///
/// - Throws: what ``StagingServer/start()`` throws (then `body` does not run), or what `body` throws.
package func withStagingServer<T>(
    _ configuration: StagingConfiguration,
    clock: StagingClock,
    http: HTTPServer.Configuration,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (StagingServer) async throws -> T
) async throws -> T {
    let server = StagingServer(configuration: configuration, clock: clock, http: http)
    try await server.start()
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}
