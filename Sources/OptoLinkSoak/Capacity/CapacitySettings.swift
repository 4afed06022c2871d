import SoakSupport
import SoakVerdicts

/// A profile's `capacity` section: the defaults of `optolink-soak capacity` for this profile
/// (each one replaced by its flag). Decoded strictly, like the rest of the profile.
///
/// ```json
/// "capacity": {"slo": ["http.failed.rate < 0.01", "events.call_latency.p99 < 250ms"],
///              "minRate": 50, "maxRate": 2000, "probeSeconds": 10, "warmup": 2,
///              "tolerance": 0.05, "maxProbes": 8, "generatorLimits": {"lateShare": 0.05}}
/// ```
package struct CapacitySettings: Sendable, Equatable, Codable {
    /// The SLO: threshold expressions that must all hold for a probe to pass.
    package var slo: [String]
    /// The first probe's arrival rate (journeys/s).
    package var minRate: Double?
    /// The highest arrival rate probed (journeys/s).
    package var maxRate: Double?
    /// Seconds each probe holds its rate, after the warm-up.
    package var probeSeconds: Double?
    /// Seconds of unmeasured load at the probe's rate before each probe.
    package var warmup: Double?
    /// The bracket's relative width at which the search stops (0.05 = 5 %).
    package var tolerance: Double?
    /// Most probes in all.
    package var maxProbes: Int?
    /// When a probe counts the generator as saturated (each field replaces its default).
    package var generatorLimits: CapacityGeneratorLimits?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case slo, minRate, maxRate, probeSeconds, warmup, tolerance, maxProbes, generatorLimits
    }

    package init(slo: [String] = []) { self.slo = slo }

    package init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        slo = try c.decodeFieldIfPresent([String].self, forKey: .slo) ?? []
        for (index, expression) in slo.enumerated() {
            guard let problem = Thresholds.problem(in: expression) else { continue }
            try c.reportOrThrow(
                DecodingError.dataCorruptedError(
                    forKey: .slo, in: c, debugDescription: "[\(index)] '\(expression)': \(problem)"))
        }
        // An optional field that, when given, must lie in `range`.
        func field<T: Decodable & Comparable>(_ key: CodingKeys, _ range: ClosedRange<T>, _ problem: String) throws
            -> T?
        {
            let value = try c.decodeFieldIfPresent(T.self, forKey: key)
            if let value, !range.contains(value) {
                try c.reportOrThrow(DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: problem))
            }
            return value
        }
        minRate = try field(.minRate, 0.001...100_000, "must be 0.001…100000 journeys/s")
        maxRate = try field(.maxRate, 0.001...100_000, "must be 0.001…100000 journeys/s")
        probeSeconds = try field(.probeSeconds, 1...3600, "must be 1…3600 seconds")
        warmup = try field(.warmup, 0...600, "must be 0…600 seconds")
        tolerance = try field(.tolerance, 0.001...0.5, "must be 0.001…0.5 (a fraction: 0.05 is 5 %)")
        maxProbes = try field(.maxProbes, 1...100, "must be 1…100")
        generatorLimits = try c.decodeFieldIfPresent(CapacityGeneratorLimits.self, forKey: .generatorLimits)
    }
}
