/// Compares secrets (an admin token) in time that depends only on their lengths, never on
/// where the first difference is, so response timing does not reveal a token byte by byte.
package enum ConstantTimeComparison {
    /// Whether `given` equals `expected`, byte for byte. Every byte of `given` is looked at
    /// whatever the outcome; a length difference is folded into the same result.
    package static func equal(_ given: some StringProtocol, _ expected: some StringProtocol) -> Bool {
        let a = Array(given.utf8)
        let b = Array(expected.utf8)
        var difference = UInt64(a.count ^ b.count)
        guard !b.isEmpty else { return false }
        for index in a.indices { difference |= UInt64(a[index] ^ b[index % b.count]) }
        return difference == 0
    }
}
