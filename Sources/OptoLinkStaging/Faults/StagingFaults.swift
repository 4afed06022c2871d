import SoakSupport
/// The kinds of injected failure (docs/CONTRACT.md §4, "Fault injection").
public enum StagingFaultKind: String, Sendable, Codable, CaseIterable {
    public init(from decoder: any Decoder) throws { self = try decoder.decodeCase(Self.self) }

    /// A JSON 5xx envelope before anything is written (default status 503).
    case errorBeforeCommit = "error_before_commit"
    /// The write commits, then a JSON 5xx envelope answers (default status 500).
    case errorAfterCommit = "error_after_commit"
    /// A proxy's HTML `502 Bad Gateway` page (`text/html`, nginx-like); after commit unless
    /// `afterCommit` is `false`.
    case html502 = "html_502"
    /// A 5xx with an empty body (default status 503); after commit unless `afterCommit` is `false`.
    case empty5xx = "empty_5xx"
    /// The write commits and the normal answer goes out after `delaySeconds` (which may
    /// exceed the client's timeout).
    case latency
    /// The connection is reset with nothing written back; before commit unless `afterCommit` is `true`.
    case reset

    /// Whether the write commits before the fault answers when `afterCommit` is unset.
    var defaultAfterCommit: Bool {
        switch self {
        case .errorBeforeCommit, .reset: false
        case .errorAfterCommit, .html502, .empty5xx, .latency: true
        }
    }
}

/// One fault rule of an endpoint: with probability `rate` a request gets `kind`.
public struct StagingFaultRule: Sendable, Codable, Equatable {
    /// What the fault does.
    public var kind: StagingFaultKind
    /// Probability per request in `0...1`.
    public var rate: Double
    /// The status for `error_*` and `empty_5xx` (500–599).
    public var status: Int?
    /// The delay in seconds for `latency` (default 15 s, past the SDK's 10 s timeout).
    public var delaySeconds: Double?
    /// Overrides the kind's commit phase (`html_502`, `empty_5xx`, `reset`).
    public var afterCommit: Bool?

    /// A rule; `rate` is a probability per request in `0...1`.
    public init(
        kind: StagingFaultKind, rate: Double, status: Int? = nil, delaySeconds: Double? = nil, afterCommit: Bool? = nil
    ) {
        self.kind = kind
        self.rate = rate
        self.status = status
        self.delaySeconds = delaySeconds
        self.afterCommit = afterCommit
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case kind, rate, status, delaySeconds, afterCommit }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        kind = try c.decode(StagingFaultKind.self, forKey: .kind)
        rate = try c.decode(Double.self, forKey: .rate)
        status = try c.decodeIfPresent(Int.self, forKey: .status)
        delaySeconds = try c.decodeIfPresent(Double.self, forKey: .delaySeconds)
        afterCommit = try c.decodeIfPresent(Bool.self, forKey: .afterCommit)
    }

    /// Whether the write commits before this fault answers.
    public var commitsWrite: Bool { kind == .errorBeforeCommit ? false : (afterCommit ?? kind.defaultAfterCommit) }
}

/// Fault rules per endpoint plus the seed of the draws, so a run replays, and outage windows.
///
/// JSON: `{"seed": 42, "endpoints": {"events": [{"kind": "html_502", "rate": 0.1}]},
/// "outages": [{"mode": "refuse", "endpoints": ["data"], "startSeconds": 20, "endSeconds": 40}]}`;
/// endpoint names as ``StagingEndpoint`` (`match`, `data`, `session`, `identity`,
/// `identity_clear`, `events`). Rules of one endpoint are tried in order; their rates add up to at most 1.
/// An ``StagingOutage`` makes endpoints unreachable for a window of seconds, whatever the rules draw.
public struct StagingFaults: Sendable, Codable, Equatable {
    /// Seeds the per-request draws: the same seed and request order give the same faults.
    public var seed: UInt64
    /// Endpoint name (``StagingEndpoint`` raw value) → its rules, tried in order.
    public var endpoints: [String: [StagingFaultRule]]
    /// Windows in which endpoints are refused or reset (checked before the rules).
    public var outages: [StagingOutage]

    /// Rules per endpoint, drawn from `seed`, and outage windows.
    public init(seed: UInt64 = 1, endpoints: [String: [StagingFaultRule]] = [:], outages: [StagingOutage] = []) {
        self.seed = seed
        self.endpoints = endpoints
        self.outages = outages
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case seed, endpoints, outages }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        seed = try c.decodeIfPresent(UInt64.self, forKey: .seed) ?? 1
        endpoints = try c.decodeIfPresent([String: [StagingFaultRule]].self, forKey: .endpoints) ?? [:]
        outages = try c.decodeIfPresent([StagingOutage].self, forKey: .outages) ?? []
    }

    /// No faults at all.
    public static let none = StagingFaults()

    /// Problems that make these rules unusable (unknown endpoint, rate outside 0…1, …); empty when valid.
    public func problems() -> [String] {
        var problems: [String] = []
        for (name, rules) in endpoints.sorted(by: { $0.key < $1.key }) {
            if StagingEndpoint(rawValue: name) == nil { problems.append("faults: unknown endpoint '\(name)'") }
            var total = 0.0
            for rule in rules {
                if !(0...1).contains(rule.rate) {
                    problems.append("faults.\(name): rate \(rule.rate) is not within 0...1")
                }
                total += rule.rate
                if let status = rule.status, !(500...599).contains(status) {
                    problems.append("faults.\(name): status \(status) is not a 5xx")
                }
                if let delay = rule.delaySeconds, !(0...3600).contains(delay) {
                    problems.append("faults.\(name): delaySeconds \(delay) is not within 0...3600")
                }
            }
            if total > 1.000_001 { problems.append("faults.\(name): rates add up to \(total), more than 1") }
        }
        for (index, outage) in outages.enumerated() { problems += outage.problems("faults.outages[\(index)]") }
        return problems
    }
}
