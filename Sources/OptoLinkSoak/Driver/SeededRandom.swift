/// A small deterministic random number generator (SplitMix64), so a profile's seed
/// reproduces the same fingerprints, IPs and journey picks.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform value in [0, 1).
    public mutating func unit() -> Double {
        Double(next() >> 11) / Double(UInt64(1) << 53)
    }

    /// Picks a key of `weights` with probability proportional to its weight (keys sorted
    /// first, so the pick depends only on the seed).
    public mutating func pick(_ weights: [String: Double]) -> String {
        let keys = weights.keys.sorted()
        return keys[pickIndex(keys.map { weights[$0] ?? 0 })]
    }

    /// Picks an index of `weights` proportionally.
    public mutating func pickIndex(_ weights: [Double]) -> Int {
        let total = weights.reduce(0, +)
        guard total > 0 else { return 0 }
        var x = unit() * total
        for (i, w) in weights.enumerated() {
            if x < w { return i }
            x -= w
        }
        return weights.count - 1
    }
}
