/// The package's one small seeded pseudo-random generator (SplitMix64): the emulator's fault draws
/// and tokens, the soak driver's `SeededRandom` and the seeded tests all use it, so a seed replays
/// the same sequence everywhere. It lives in the lowest module that needs it (the HTTP layer's fuzz
/// tests); `package`, not part of any product's public API. Not for anything secret.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    package init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform draw in `0..<1`.
    package mutating func unit() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }
}
