import SoakSupport
/// Tunables of the match ladder (docs/CONTRACT.md §4): windows in seconds, scored weights and threshold.
public struct StagingMatchSettings: Sendable, Codable, Equatable {
    /// How long an unconsumed click can be matched, in seconds (default 24 h).
    public var clickTTLSeconds: Double
    /// IP_FUZZY matches a click from the same IP at most this many seconds old (default 1 h).
    public var ipFuzzyWindowSeconds: Double
    /// FINGERPRINT_SCORED needs a score at least this high (default 60 of 100).
    public var scoredThreshold: Int
    /// Weights of the scored matcher: same platform (case-insensitive).
    public var platformWeight: Int
    /// Same client IP.
    public var ipWeight: Int
    /// Same major.minor OS version.
    public var osVersionWeight: Int
    /// Same language tag (case-insensitive).
    public var languageWeight: Int
    /// Same time zone.
    public var timezoneWeight: Int

    /// The defaults: 24 h click TTL, 1 h IP-fuzzy window, threshold 60 of 100.
    public init(
        clickTTLSeconds: Double = 86_400, ipFuzzyWindowSeconds: Double = 3_600, scoredThreshold: Int = 60,
        platformWeight: Int = 10, ipWeight: Int = 50, osVersionWeight: Int = 20, languageWeight: Int = 15,
        timezoneWeight: Int = 5
    ) {
        self.clickTTLSeconds = clickTTLSeconds
        self.ipFuzzyWindowSeconds = ipFuzzyWindowSeconds
        self.scoredThreshold = scoredThreshold
        self.platformWeight = platformWeight
        self.ipWeight = ipWeight
        self.osVersionWeight = osVersionWeight
        self.languageWeight = languageWeight
        self.timezoneWeight = timezoneWeight
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case clickTTLSeconds, ipFuzzyWindowSeconds, scoredThreshold, platformWeight, ipWeight, osVersionWeight
        case languageWeight, timezoneWeight
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        let d = StagingMatchSettings()
        clickTTLSeconds = try c.decodeIfPresent(Double.self, forKey: .clickTTLSeconds) ?? d.clickTTLSeconds
        ipFuzzyWindowSeconds =
            try c.decodeIfPresent(Double.self, forKey: .ipFuzzyWindowSeconds) ?? d.ipFuzzyWindowSeconds
        scoredThreshold = try c.decodeIfPresent(Int.self, forKey: .scoredThreshold) ?? d.scoredThreshold
        platformWeight = try c.decodeIfPresent(Int.self, forKey: .platformWeight) ?? d.platformWeight
        ipWeight = try c.decodeIfPresent(Int.self, forKey: .ipWeight) ?? d.ipWeight
        osVersionWeight = try c.decodeIfPresent(Int.self, forKey: .osVersionWeight) ?? d.osVersionWeight
        languageWeight = try c.decodeIfPresent(Int.self, forKey: .languageWeight) ?? d.languageWeight
        timezoneWeight = try c.decodeIfPresent(Int.self, forKey: .timezoneWeight) ?? d.timezoneWeight
    }
}

extension StagingMatchSettings {
    /// The largest weight or threshold: scores are sums of a few weights, so they stay far from
    /// overflow (the defaults score out of 100).
    public static let largestWeight = 1_000_000
    /// The longest click TTL or IP-fuzzy window, in seconds (one year).
    public static let longestWindowSeconds = 31_536_000.0

    /// Values that make these settings unusable, each naming its field under `match.`; empty when valid.
    public func problems() -> [String] {
        var problems: [String] = []
        let integers: [(String, Int)] = [
            ("scoredThreshold", scoredThreshold), ("platformWeight", platformWeight), ("ipWeight", ipWeight),
            ("osVersionWeight", osVersionWeight), ("languageWeight", languageWeight),
            ("timezoneWeight", timezoneWeight),
        ]
        for (name, value) in integers where !(0...Self.largestWeight).contains(value) {
            problems.append("match.\(name) \(value) is not within 0...\(Self.largestWeight)")
        }
        let windows = [("clickTTLSeconds", clickTTLSeconds), ("ipFuzzyWindowSeconds", ipFuzzyWindowSeconds)]
        for (name, value) in windows where !(0...Self.longestWindowSeconds).contains(value) {
            problems.append("match.\(name) \(value) is not within 0...\(Int(Self.longestWindowSeconds)) seconds")
        }
        return problems
    }
}
