/// Nearest-rank arithmetic in integers, the one definition every quantile of a report uses.
///
/// The p-th percentile of `count` sorted values is the value at rank ⌈p/100 · count⌉
/// (1-based, at least 1). Computing that product in floating point gives one rank too many
/// whenever it should be a whole number (99.9 % of 1,000 evaluates to 999.000…01 and rounds up
/// to 1,000). Here `p` is first made an exact integer count of millionths of a percent, and
/// the ceiling is taken in integer arithmetic, so every percentile written with at most six
/// decimals (`p50`, `p99.9`, `p99.99`) gets its exact rank.
package enum NearestRank {
    /// Millionths of a percent per percent: `p = 99.9` is 99,900,000 units.
    static let unitsPerPercent: UInt64 = 1_000_000

    /// The 1-based nearest rank of percentile `p` (0…100) among `count` values; 0 when `count` is 0.
    package static func rank(percentile p: Double, count: UInt64) -> UInt64 {
        guard count > 0 else { return 0 }
        let clamped = p.isFinite ? Swift.min(Swift.max(p, 0), 100) : 100
        let units = UInt64((clamped * Double(unitsPerPercent)).rounded())
        let whole = 100 * unitsPerPercent
        // ⌈units · count / whole⌉ without overflow: the product is formed in 128 bits.
        let product = units.multipliedFullWidth(by: count)
        let (quotient, remainder) = whole.dividingFullWidth(product)
        return Swift.min(count, Swift.max(1, quotient + (remainder > 0 ? 1 : 0)))
    }

    /// ``rank(percentile:count:)`` for an `Int` count, as a 0-based index into sorted values
    /// (`nil` when `count` is 0).
    package static func index(percentile p: Double, count: Int) -> Int? {
        guard count > 0 else { return nil }
        return Int(rank(percentile: p, count: UInt64(count))) - 1
    }
}
