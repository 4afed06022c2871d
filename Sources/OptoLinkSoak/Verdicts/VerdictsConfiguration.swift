/// SKELETON: the profile's `expect` section (declared limits, back-off tolerance,
/// thresholds). Owned and finished by the verdicts work.
public struct VerdictsConfiguration: Sendable, Codable, Equatable {
    /// k6-style threshold expressions, e.g. `"match.call_latency.p95 < 250ms"`.
    public var thresholds: [String]

    public init(thresholds: [String] = []) {
        self.thresholds = thresholds
    }
}
