import Foundation
import Testing

import SoakRecords
import SoakVerdicts
import SoakSupport

@Suite("Mann–Whitney U over histograms")
struct MannWhitneyTests {
    /// Raw samples → the value of the HDR bucket each one lands in (what `summary.json` keeps).
    static func quantized(_ values: [Double]) -> [Double] {
        values.map { value in
            var one = LatencyHistogram()
            one.record(value)
            return one.nonEmptyBuckets[0].low
        }
    }

    static func histogram(_ values: [Double]) -> HistogramSummary {
        var h = LatencyHistogram()
        for v in values { h.record(v) }
        return HistogramSummary(h)
    }

    /// Textbook U by comparing every pair, variance from the sorted pooled sample's tie runs, and
    /// p from the normal approximation with continuity correction — written independently of the
    /// bucketed implementation.
    static func bruteForce(_ a: [Double], _ b: [Double]) -> (u: Double, p: Double) {
        var u = 0.0
        for y in b {
            for x in a {
                if y > x { u += 1 } else if y == x { u += 0.5 }
            }
        }
        let pooled = (a + b).sorted()
        var tie = 0.0
        var i = 0
        while i < pooled.count {
            var j = i
            while j < pooled.count && pooled[j] == pooled[i] { j += 1 }
            let t = Double(j - i)
            tie += t * t * t - t
            i = j
        }
        let na = Double(a.count)
        let nb = Double(b.count)
        let n = na + nb
        let sigma = (na * nb / 12 * (n + 1 - tie / (n * (n - 1)))).squareRoot()
        let d = abs(u - na * nb / 2)
        let z = max(0, d - 0.5) / sigma
        return (u, erfc(z / 2.0.squareRoot()))
    }

    static func lognormal(_ count: Int, median: Double, seed: UInt64) -> [Double] {
        var rng = SeededRandom(seed: seed)
        return (0..<count).map { _ in
            // Box–Muller.
            let u1 = max(rng.unit(), 1e-12)
            let u2 = rng.unit()
            let normal = (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
            return median * exp(0.35 * normal)
        }
    }

    @Test(
        "U and p equal a brute-force computation on the raw samples quantized to buckets",
        arguments: [(300, 400, 1.0), (250, 250, 1.05), (120, 500, 1.3), (40, 60, 0.9)])
    func matchesBruteForce(countA: Int, countB: Int, shift: Double) {
        let rawA = Self.lognormal(countA, median: 0.004, seed: UInt64(countA))
        let rawB = Self.lognormal(countB, median: 0.004 * shift, seed: UInt64(countB) + 99)
        let result = MannWhitneyU.test(baseline: Self.histogram(rawA), current: Self.histogram(rawB))
        let expected = Self.bruteForce(Self.quantized(rawA), Self.quantized(rawB))
        #expect(result.countA == Double(countA) && result.countB == Double(countB))
        #expect(abs(result.u - expected.u) < 1e-6)
        #expect(abs(result.pTwoSided - expected.p) < 1e-9 * max(1, expected.p) + 1e-12)
        #expect(abs(result.probabilityOfSuperiority - expected.u / Double(countA * countB)) < 1e-12)
    }

    @Test("heavy ties: every value in a few buckets (integers), checked against brute force")
    func heavyTies() {
        var rng = SeededRandom(seed: 5)
        let a = (0..<200).map { _ in Double(1 + Int(rng.unit() * 4)) }
        let b = (0..<150).map { _ in Double(2 + Int(rng.unit() * 4)) }
        func pairs(_ values: [Double]) -> [(value: Double, count: Double)] {
            Dictionary(grouping: values, by: { $0 }).map { ($0.key, Double($0.value.count)) }
        }
        let result = MannWhitneyU.test(baseline: pairs(a), current: pairs(b))
        let expected = Self.bruteForce(a, b)
        #expect(abs(result.u - expected.u) < 1e-9)
        #expect(abs(result.pTwoSided - expected.p) < 1e-9)
        #expect(result.z > 0 && result.pGreater < 0.01)
    }

    @Test("a textbook case: complete separation of 3 and 3 values")
    func completeSeparation() {
        let result = MannWhitneyU.test(
            baseline: [(1, 1), (2, 1), (3, 1)], current: [(4, 1), (5, 1), (6, 1)])
        #expect(result.u == 9)
        #expect(result.probabilityOfSuperiority == 1)
        // z = (9 − 4.5 − 0.5) / sqrt(3·3·7/12) = 4 / 2.2913 = 1.7457; two-sided p ≈ 0.0809.
        #expect(abs(result.z - 1.7457) < 1e-3)
        #expect(abs(result.pTwoSided - 0.0809) < 1e-3)
    }

    @Test("the test is antisymmetric: swapping the runs gives nA·nB − U and the same two-sided p")
    func antisymmetric() {
        let a = Self.histogram(Self.lognormal(500, median: 0.01, seed: 1))
        let b = Self.histogram(Self.lognormal(700, median: 0.011, seed: 2))
        let ab = MannWhitneyU.test(baseline: a, current: b)
        let ba = MannWhitneyU.test(baseline: b, current: a)
        #expect(abs(ab.u + ba.u - 500 * 700) < 1e-6)
        #expect(abs(ab.pTwoSided - ba.pTwoSided) < 1e-12)
        #expect(ab.z > 0 && ba.z < 0)
    }

    @Test("empty samples and all-tied samples give p = 1, never NaN")
    func degenerate() {
        let empty = MannWhitneyU.test(baseline: [], current: [(1, 10)])
        #expect(empty.pTwoSided == 1 && empty.pGreater == 1)
        let tied = MannWhitneyU.test(baseline: [(0.002, 50)], current: [(0.002, 80)])
        #expect(tied.pTwoSided == 1 && tied.u == 50 * 80 / 2)
        let junk = MannWhitneyU.test(baseline: [(1, -3), (2, .nan)], current: [(1, 4)])
        #expect(junk.countA == 0 && junk.pTwoSided == 1)
    }

    @Test("a 20 % shift is significant with a few hundred samples; the same distribution twice is not")
    func power() {
        let a = Self.histogram(Self.lognormal(400, median: 0.02, seed: 11))
        let shifted = Self.histogram(Self.lognormal(400, median: 0.024, seed: 12))
        let same = Self.histogram(Self.lognormal(400, median: 0.02, seed: 13))
        #expect(MannWhitneyU.test(baseline: a, current: shifted).pGreater < 0.01)
        #expect(MannWhitneyU.test(baseline: a, current: same).pTwoSided > 0.01)
    }
}
