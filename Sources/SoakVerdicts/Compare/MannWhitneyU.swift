import Foundation

/// The Mann–Whitney U test (Wilcoxon rank-sum) over two bucketed samples, such as two HDR
/// latency histograms, telling a real latency shift from run-to-run noise.
///
/// Each sample is a list of `(value, count)` pairs (a histogram's non-empty buckets, value =
/// the bucket's lowest value in seconds). Every bucket is one group of tied values: samples
/// that fall into the same bucket get the average of the ranks they span, and the variance is
/// tie-corrected. So the test is exact for the bucketed values, which differ from the raw ones by
/// at most a bucket width (< 1 %).
///
/// Assumptions (stated in `docs/COMPARE.md` too): the two runs' latencies are independent
/// observations (not paired), and the question is whether one run's latency tends to be larger
/// (stochastic dominance); the p-value comes from the normal approximation with continuity
/// correction, which is accurate when both samples have at least ~20 values. Latencies within one
/// run are not truly independent (they share a machine and its noise), which makes the test
/// over-sensitive for large samples: that is why a regression also needs a relative and an
/// absolute effect size (see ``RegressionRules``).
package struct MannWhitneyU: Sendable, Equatable, Codable {
    /// Sample sizes of the baseline (`a`) and the current run (`b`).
    package var countA: Double
    package var countB: Double
    /// U of the current run: the number of (a, b) pairs with b > a, ties counting ½.
    package var u: Double
    /// Standard score of `u` (tie-corrected, continuity-corrected); positive = current larger.
    package var z: Double
    /// Two-sided p-value (normal approximation); 1 when either sample is empty or all values tie.
    package var pTwoSided: Double
    /// One-sided p-value for "the current run is larger" (a slowdown).
    package var pGreater: Double
    /// Probability that a random current value exceeds a random baseline value (ties ½), in 0…1;
    /// 0.5 = no shift. The common-language effect size, `u / (countA · countB)`.
    package var probabilityOfSuperiority: Double

    /// Runs the test on two bucketed samples; buckets with equal values (in either list) tie.
    /// Negative or non-finite counts are ignored.
    package static func test(baseline a: [(value: Double, count: Double)], current b: [(value: Double, count: Double)])
        -> MannWhitneyU
    {
        // Merge both samples into groups of equal value, ascending.
        var groups: [Double: (a: Double, b: Double)] = [:]
        for (value, count) in a where count > 0 && count.isFinite { groups[value, default: (0, 0)].a += count }
        for (value, count) in b where count > 0 && count.isFinite { groups[value, default: (0, 0)].b += count }
        let na = groups.values.reduce(0) { $0 + $1.a }
        let nb = groups.values.reduce(0) { $0 + $1.b }
        let n = na + nb
        guard na > 0, nb > 0 else {
            return MannWhitneyU(
                countA: na, countB: nb, u: 0, z: 0, pTwoSided: 1, pGreater: 1, probabilityOfSuperiority: 0.5)
        }
        var rankSumB = 0.0
        var tieTerm = 0.0
        var below = 0.0
        for value in groups.keys.sorted() {
            guard let group = groups[value] else { continue }
            let t = group.a + group.b
            // Ranks below+1 … below+t, average below + (t+1)/2.
            rankSumB += group.b * (below + (t + 1) / 2)
            tieTerm += t * t * t - t
            below += t
        }
        let u = rankSumB - nb * (nb + 1) / 2
        let mean = na * nb / 2
        let variance = na * nb / 12 * ((n + 1) - tieTerm / (n * (n - 1)))
        let superiority = u / (na * nb)
        guard variance > 0, variance.isFinite else {
            return MannWhitneyU(
                countA: na, countB: nb, u: u, z: 0, pTwoSided: 1, pGreater: 1, probabilityOfSuperiority: superiority)
        }
        let sd = variance.squareRoot()
        let difference = u - mean
        let corrected = difference > 0 ? max(0, difference - 0.5) : min(0, difference + 0.5)
        let z = corrected / sd
        let zGreater = (difference - 0.5) / sd
        return MannWhitneyU(
            countA: na, countB: nb, u: u, z: z, pTwoSided: min(1, erfc(abs(z) / 2.0.squareRoot())),
            pGreater: min(1, 0.5 * erfc(zGreater / 2.0.squareRoot())), probabilityOfSuperiority: superiority)
    }

    /// The test over two summary histograms (their `buckets`).
    package static func test(baseline a: HistogramSummary, current b: HistogramSummary) -> MannWhitneyU {
        test(baseline: a.bucketPairs, current: b.bucketPairs)
    }
}

extension HistogramSummary {
    /// The `buckets` as `(lowest value in seconds, count)` pairs; malformed entries are skipped.
    package var bucketPairs: [(value: Double, count: Double)] {
        buckets.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
    }
}
