/// A small deterministic random number generator (the package's `SplitMix64` with weighted picks),
/// so a profile's seed reproduces the same fingerprints, IPs and journey picks.
package struct SeededRandom: RandomNumberGenerator, Sendable {
    private var generator: SplitMix64

    /// A generator whose sequence is fixed by `seed`.
    package init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 { generator.next() }

    /// A uniform value in [0, 1).
    package mutating func unit() -> Double { generator.unit() }

    /// Picks a key of `weights` with probability proportional to its weight (keys sorted
    /// first, so the pick depends only on the seed).
    package mutating func pick(_ weights: [String: Double]) -> String {
        let keys = weights.keys.sorted()
        return keys[pickIndex(keys.map { weights[$0] ?? 0 })]
    }

    /// Picks an index of `weights` proportionally.
    package mutating func pickIndex(_ weights: [Double]) -> Int {
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
