import SoakSupport
/// How an outage makes its endpoints unreachable (docs/CONTRACT.md §4, "Fault injection").
public enum StagingOutageMode: String, Sendable, Codable, CaseIterable {
    public init(from decoder: any Decoder) throws { self = try decoder.decodeCase(Self.self) }

    /// The connection closes in order with no response (the client sees the connection end
    /// before any answer: URLSession's `networkConnectionLost` or `badServerResponse`), as
    /// from a load balancer with no healthy backend. The request's path is known only once it
    /// has arrived, so this refuses requests, not TCP connections.
    case refuse
    /// The connection is reset (TCP RST) with nothing written back: `ECONNRESET`.
    case reset
}

/// A window of run time in which every request to some endpoints, or to everything but the
/// admin routes, is refused or reset.
///
/// JSON: `{"mode": "refuse", "endpoints": ["data"], "startSeconds": 20, "endSeconds": 40}`.
/// Seconds count from when the fault set was put in force: the emulator's start for a
/// configuration file or a profile, the `PUT /__admin/faults` otherwise (the soak tester
/// counts them from its run's start). A request arriving at second `t` is hit when
/// `startSeconds <= t < endSeconds`. Outages answer before rate limits, keys and the
/// per-request fault rules, and write nothing.
public struct StagingOutage: Sendable, Codable, Equatable {
    /// Refuse or reset.
    public var mode: StagingOutageMode
    /// ``StagingEndpoint`` names (`data`, `match`, `session`, `identity`, `identity_clear`,
    /// `events`, `click`, `aasa`, `unknown`); `nil` means every route except `/__admin/*`.
    public var endpoints: [String]?
    /// When the outage begins, in seconds from the origin (inclusive).
    public var startSeconds: Double
    /// When it ends, in seconds from the origin (exclusive).
    public var endSeconds: Double

    /// An outage of `endpoints` (every non-admin route when `nil`) from `startSeconds` to `endSeconds`.
    public init(mode: StagingOutageMode, endpoints: [String]? = nil, startSeconds: Double, endSeconds: Double) {
        self.mode = mode
        self.endpoints = endpoints
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case mode, endpoints, startSeconds, endSeconds }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        mode = try c.decode(StagingOutageMode.self, forKey: .mode)
        endpoints = try c.decodeIfPresent([String].self, forKey: .endpoints)
        startSeconds = try c.decode(Double.self, forKey: .startSeconds)
        endSeconds = try c.decode(Double.self, forKey: .endSeconds)
    }

    /// Whether a request to `endpoint` arriving `elapsed` seconds after the origin is hit.
    func covers(_ endpoint: StagingEndpoint, at elapsed: Double) -> Bool {
        guard endpoint != .admin, elapsed >= startSeconds, elapsed < endSeconds else { return false }
        guard let endpoints else { return true }
        return endpoints.contains(endpoint.rawValue)
    }

    /// What is wrong with this outage, each problem prefixed with `field` (e.g. `faults.outages[0]`).
    func problems(_ field: String) -> [String] {
        var problems: [String] = []
        if !startSeconds.isFinite || startSeconds < 0 {
            problems.append("\(field).startSeconds: \(startSeconds) must be a number of seconds >= 0")
        }
        if !endSeconds.isFinite || endSeconds <= startSeconds {
            problems.append("\(field).endSeconds: \(endSeconds) must be after startSeconds (\(startSeconds))")
        }
        if let endpoints {
            if endpoints.isEmpty {
                problems.append("\(field).endpoints: empty (leave it out to cut every endpoint)")
            }
            let allowed = StagingEndpoint.allCases.filter { $0 != .admin }.map(\.rawValue)
            for name in endpoints where !allowed.contains(name) {
                problems.append(
                    "\(field).endpoints: unknown endpoint '\(name)' (expected one of \(allowed.joined(separator: ", ")))"
                )
            }
        }
        return problems
    }
}
