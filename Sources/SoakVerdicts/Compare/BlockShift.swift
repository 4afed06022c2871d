import Foundation

/// One latency quantile of one series compared between two runs over blocks of a few seconds:
/// each block's quantile (say each second's p50) is one observation, so the spread between blocks
/// estimates how much that quantile wobbles with the machine's second-by-second state, and a
/// shift is judged against that spread instead of against the (much smaller) spread of single
/// requests, which are not independent of one another.
///
/// The shift is the Hodges–Lehmann estimate (the median of every current-block − baseline-block
/// difference) with its distribution-free 95 % confidence interval; the test is a one-sided
/// Mann–Whitney U test over the blocks.
package struct BlockShift: Sendable, Codable, Equatable {
    /// Which quantile of each block: `p50` or `p95`.
    package var quantile: String
    /// The block width in seconds.
    package var blockSeconds: Double
    package var baselineBlocks: Int
    package var currentBlocks: Int
    /// The median over blocks of each block's quantile, seconds.
    package var baseline: Double
    package var current: Double
    /// Hodges–Lehmann shift current − baseline (seconds) and its 95 % confidence interval.
    package var shift: Double
    package var shiftLow: Double
    package var shiftHigh: Double
    /// One-sided p-value of "the current run's blocks are slower" (Mann–Whitney U over the blocks).
    package var pGreater: Double

    /// `shift` relative to the baseline's median block quantile; `nil` when that is 0.
    package var relative: Double? { baseline > 0 ? shift / baseline : nil }

    /// Compares two runs' block quantiles; `nil` when either has no block.
    package static func compare(
        quantile: String, blockSeconds: Double, baseline b: [Double], current c: [Double]
    ) -> BlockShift? {
        guard !b.isEmpty, !c.isEmpty else { return nil }
        let test = MannWhitneyU.test(baseline: b.map { ($0, 1) }, current: c.map { ($0, 1) })
        let (low, estimate, high) = hodgesLehmann(baseline: b, current: c)
        return BlockShift(
            quantile: quantile, blockSeconds: blockSeconds, baselineBlocks: b.count, currentBlocks: c.count,
            baseline: median(b), current: median(c), shift: estimate, shiftLow: low, shiftHigh: high,
            pGreater: test.pGreater)
    }

    /// The median of the pairwise differences `c − b` and its 95 % confidence interval: the
    /// differences of ranks `k` and `n·m − 1 − k` (0-based), `k` from the normal approximation of U.
    static func hodgesLehmann(baseline b: [Double], current c: [Double]) -> (Double, Double, Double) {
        var differences: [Double] = []
        differences.reserveCapacity(b.count * c.count)
        for x in c { for y in b { differences.append(x - y) } }
        differences.sort()
        let n = Double(b.count)
        let m = Double(c.count)
        let k = Int((n * m / 2 - 1.96 * (n * m * (n + m + 1) / 12).squareRoot()).rounded(.down))
        let low = differences[max(0, min(differences.count - 1, k))]
        let high = differences[max(0, min(differences.count - 1, differences.count - 1 - k))]
        return (low, median(differences), high)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
