import SoakSupport
/// The rate-limit algorithm the emulator enforces (docs/CONTRACT.md §1, "Rate limits").
public enum StagingRateLimitAlgorithm: String, Sendable, Codable, CaseIterable {
    /// `@nestjs/throttler`'s fixed window: a key's window opens at its first hit and lasts
    /// the window length; at most `limit` hits are accepted inside it.
    case fixedWindow = "fixed_window"
    /// A sliding log: a hit is accepted while fewer than `limit` accepted hits lie within
    /// the last window length.
    case slidingLog = "sliding_log"

    /// Decodes `fixed_window` or `sliding_log`; `sliding_window`, the profiles' `expect.algorithm`
    /// name for the same algorithm, is accepted too, so one spelling works in both places.
    ///
    /// - Throws: `DecodingError.dataCorrupted` naming the allowed values for any other string.
    public init(from decoder: any Decoder) throws {
        if (try? decoder.singleValueContainer().decode(String.self)) == "sliding_window" {
            self = .slidingLog
            return
        }
        self = try decoder.decodeCase(Self.self)
    }
}

/// A limit: `limit` requests per `windowSeconds` seconds.
public struct StagingRateLimitRule: Sendable, Codable, Equatable {
    /// Requests accepted per window.
    public var limit: Int
    /// The window length in seconds.
    public var windowSeconds: Double

    /// `limit` requests per `windowSeconds` seconds.
    public init(limit: Int, windowSeconds: Double) {
        self.limit = limit
        self.windowSeconds = windowSeconds
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case limit, windowSeconds }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        limit = try c.decode(Int.self, forKey: .limit)
        windowSeconds = try c.decode(Double.self, forKey: .windowSeconds)
    }
}

/// The rate-limit buckets of docs/CONTRACT.md §1.
public enum StagingBucketClass: String, Sendable, Codable, CaseIterable {
    /// `POST /match`, per client IP.
    case match
    /// `GET /{orgKey}/{shortCode}/data`, per client IP.
    case data
    /// `/sdk/session`, `/sdk/identity` and `/sdk/identity/clear`: one shared bucket per API key.
    case sdk
    /// `POST /sdk/events`, per API key.
    case events
}

/// The rate limits the emulator enforces; every limit and window is configurable so tests
/// can scale time down (e.g. 5 per 2 s).
public struct StagingLimits: Sendable, Codable, Equatable {
    /// `false` turns every limit off (e.g. raw capacity benchmarks).
    public var enabled: Bool
    /// Fixed window (default, as `@nestjs/throttler`) or sliding log.
    public var algorithm: StagingRateLimitAlgorithm
    /// 30 per 60 s per IP by default.
    public var match: StagingRateLimitRule
    /// 500 per 1 s per IP by default.
    public var data: StagingRateLimitRule
    /// 60 per 60 s per key by default (session + identity + clear together). Configured as
    /// `limits.session_identity`, the bucket's name in `expect.limits` too; the older key `sdk` is
    /// still read (see ``deprecatedKeys(inConfigurationJSON:)``).
    public var sdk: StagingRateLimitRule
    /// 600 per 60 s per key by default.
    public var events: StagingRateLimitRule

    /// The limits of docs/CONTRACT.md §1 unless overridden.
    public init(
        enabled: Bool = true, algorithm: StagingRateLimitAlgorithm = .fixedWindow,
        match: StagingRateLimitRule = .init(limit: 30, windowSeconds: 60),
        data: StagingRateLimitRule = .init(limit: 500, windowSeconds: 1),
        sdk: StagingRateLimitRule = .init(limit: 60, windowSeconds: 60),
        events: StagingRateLimitRule = .init(limit: 600, windowSeconds: 60)
    ) {
        self.enabled = enabled
        self.algorithm = algorithm
        self.match = match
        self.data = data
        self.sdk = sdk
        self.events = events
    }

    enum CodingKeys: String, CodingKey, CaseIterable, DeprecatedAliasKey {
        case match, data
        case sessionIdentity = "session_identity"
        case events, enabled, algorithm
        /// The old name of `session_identity`, still accepted with a deprecation note.
        case sdk

        var isDeprecatedAlias: Bool { self == .sdk }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        let d = StagingLimits()
        enabled = try c.decodeIfPresent(Bool.self, forKey: .enabled) ?? d.enabled
        algorithm = try c.decodeIfPresent(StagingRateLimitAlgorithm.self, forKey: .algorithm) ?? d.algorithm
        match = try c.decodeIfPresent(StagingRateLimitRule.self, forKey: .match) ?? d.match
        data = try c.decodeIfPresent(StagingRateLimitRule.self, forKey: .data) ?? d.data
        if c.contains(.sessionIdentity), c.contains(.sdk) {
            throw DecodingError.dataCorruptedError(
                forKey: .sdk, in: c,
                debugDescription: "the old name of session_identity; give the bucket once, as session_identity")
        }
        sdk =
            try c.decodeIfPresent(StagingRateLimitRule.self, forKey: .sessionIdentity)
            ?? c.decodeIfPresent(StagingRateLimitRule.self, forKey: .sdk) ?? d.sdk
        events = try c.decodeIfPresent(StagingRateLimitRule.self, forKey: .events) ?? d.events
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(enabled, forKey: .enabled)
        try c.encode(algorithm, forKey: .algorithm)
        try c.encode(match, forKey: .match)
        try c.encode(data, forKey: .data)
        try c.encode(sdk, forKey: .sessionIdentity)
        try c.encode(events, forKey: .events)
    }

    /// Notes for configuration keys that still work but have a new name: today `limits.sdk`,
    /// now `limits.session_identity` (one name for the bucket here and in a profile's
    /// `expect.limits`). `json` is the configuration object (`JSONSerialization` output).
    public static func deprecatedKeys(inConfigurationJSON json: Any?, prefix: String = "") -> [String] {
        guard let limits = (json as? [String: Any])?["limits"] as? [String: Any], limits["sdk"] != nil else {
            return []
        }
        return ["\(prefix)limits.sdk is deprecated: call the bucket \(prefix)limits.session_identity (same limit)"]
    }

    /// The rule of one bucket class.
    public func rule(for bucket: StagingBucketClass) -> StagingRateLimitRule {
        switch bucket {
        case .match: match
        case .data: data
        case .sdk: sdk
        case .events: events
        }
    }
}
