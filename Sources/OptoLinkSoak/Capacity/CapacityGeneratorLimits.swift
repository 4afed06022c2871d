import SoakSupport

/// Overrides of the limits past which a probe counts the generator as saturated
/// (``CapacityGeneratorHealth/Limits``): the profile's `capacity.generatorLimits` and the
/// `--max-late-starts`, `--max-dropped`, `--max-start-lag` and `--max-generator-cpu` flags.
/// A field left out keeps the default (or the profile's value, under a flag).
///
/// ```json
/// "generatorLimits": {"lateShare": 0.05, "droppedShare": 0.01, "startLagP99": 0.1, "cpuShare": 0.9}
/// ```
package struct CapacityGeneratorLimits: Sendable, Equatable, Codable {
    /// Most late starts, as a share of journeys started.
    package var lateShare: Double?
    /// Most dropped arrivals, as a share of those planned.
    package var droppedShare: Double?
    /// Most start lag at p99, seconds.
    package var startLagP99: Double?
    /// Most CPU share of the generator's cores.
    package var cpuShare: Double?

    enum CodingKeys: String, CodingKey, CaseIterable { case lateShare, droppedShare, startLagP99, cpuShare }

    /// A field's accepted range, and how an error words it.
    static func bounds(_ key: CodingKeys) -> (range: ClosedRange<Double>, problem: String) {
        switch key {
        case .lateShare: (0...1, "must be 0…1 (a share of journeys started: 0.05 or 5% is 5 %)")
        case .droppedShare: (0...1, "must be 0…1 (a share of planned arrivals: 0.01 or 1% is 1 %)")
        case .startLagP99: (0.001...3600, "must be 0.001…3600 seconds (0.1 or 100ms is 100 ms)")
        case .cpuShare: (0.01...1, "must be 0.01…1 (a share of the generator's cores: 0.9 or 90% is 90 %)")
        }
    }

    package init() {}

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func field(_ key: CodingKeys) throws -> Double? {
            let value = try c.decodeFieldIfPresent(Double.self, forKey: key)
            let bounds = Self.bounds(key)
            if let value, !bounds.range.contains(value) {
                try c.reportOrThrow(
                    DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: bounds.problem))
            }
            return value
        }
        lateShare = try field(.lateShare)
        droppedShare = try field(.droppedShare)
        startLagP99 = try field(.startLagP99)
        cpuShare = try field(.cpuShare)
    }

    /// `limits` with every field given here replacing its own.
    package func applied(to limits: CapacityGeneratorHealth.Limits) -> CapacityGeneratorHealth.Limits {
        var limits = limits
        if let lateShare { limits.lateShare = lateShare }
        if let droppedShare { limits.droppedShare = droppedShare }
        if let startLagP99 { limits.startLagP99 = startLagP99 }
        if let cpuShare { limits.cpuShare = cpuShare }
        return limits
    }
}
