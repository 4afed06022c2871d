import Foundation
import Testing

import SoakRecords
import SoakVerdicts
import SoakTestSupport
import SoakSupport

@Suite("HDR histogram")
struct LatencyHistogramTests {
    static let quantiles = [1.0, 50, 90, 95, 99, 99.5, 99.9, 99.99]

    @Test("nearest rank in integers matches ⌈p·n/100⌉ for every count 1…5000 and every reported percentile")
    func nearestRankForEveryCount() {
        for count in 1...5000 {
            for p in Self.quantiles {
                let rank = NearestRank.rank(percentile: p, count: UInt64(count))
                #expect(Int(rank) == Fixture.referenceRank(p, count: count), "p\(p) of \(count)")
            }
        }
        #expect(NearestRank.rank(percentile: 99.9, count: 1000) == 999)
        #expect(NearestRank.rank(percentile: 99.9, count: 2000) == 1998)
        #expect(NearestRank.rank(percentile: 50, count: 1) == 1)
        #expect(NearestRank.rank(percentile: 0, count: 7) == 1)
        #expect(NearestRank.rank(percentile: 100, count: 7) == 7)
        #expect(NearestRank.index(percentile: 99, count: 0) == nil)
        // Counts far beyond any run do not overflow.
        #expect(NearestRank.rank(percentile: 99.9, count: UInt64.max / 2) < UInt64.max / 2)
    }

    @Test("the histogram reports the value at the nearest rank for every count 1…4990 (one value per bucket)")
    func histogramRankForEveryCount() {
        var histogram = LatencyHistogram()
        var expected: [Double] = []
        for count in 1...4990 {
            // Sample k sits alone in bucket k + 1, so a rank one off lands in another bucket.
            let (low, width) = LatencyHistogram.bounds(of: count + 1)
            histogram.record((Double(low) + 0.5) / 1e9)
            expected.append((Double(low) + Double(width - 1) / 2) / 1e9)
            for p in [50.0, 99, 99.9] {
                let rank = Fixture.referenceRank(p, count: count)
                let want = min(max(expected[rank - 1], histogram.min), histogram.max)
                #expect(histogram.percentile(p) == want, "p\(p) of \(count)")
            }
        }
    }

    @Test("p99.9 of 1000 events is the 999th value (7.8 ms), not the maximum (11.9 ms)")
    func p999OfAThousandIsNotTheMax() {
        var histogram = LatencyHistogram()
        for i in 1...998 { histogram.record(Double(i) * 0.000005) }
        histogram.record(0.0078)
        histogram.record(0.0119)
        let p999 = histogram.percentile(99.9)
        #expect(abs(p999 - 0.0078) <= 0.0078 * LatencyHistogram.relativePrecision, "\(p999)")
        // The small-set distribution of the reports uses the same ranks: p90 of 10 values is the 9th.
        #expect(Distribution((1...10).map { Double($0) }).p90 == 9)
        #expect(Distribution((1...1000).map { Double($0) }).p99 == 990)
    }

    @Test("percentiles are within the stated relative precision", arguments: [1, 7, 1000, 50_000])
    func precision(count: Int) {
        var rng = SeededRandom(seed: UInt64(count))
        var histogram = LatencyHistogram()
        var values: [Double] = []
        for _ in 0..<count {
            // Log-uniform between 50 µs and 30 s: every octave gets exercised.
            let v = 50e-6 * pow(30 / 50e-6, rng.unit())
            values.append(v)
            histogram.record(v)
        }
        values.sort()
        for p in [50.0, 90, 95, 99, 99.9, 100] {
            let exact = Fixture.exactPercentile(values, p)
            let got = histogram.percentile(p)
            #expect(abs(got - exact) <= exact * LatencyHistogram.relativePrecision, "p\(p): \(got) vs \(exact)")
        }
        #expect(histogram.count == UInt64(count))
        #expect(histogram.max == values.last)
        #expect(histogram.min == values.first)
    }

    @Test("bucket index and bounds agree for every bucket")
    func bucketsRoundTrip() {
        for index in 0..<LatencyHistogram.bucketCount {
            let (low, width) = LatencyHistogram.bounds(of: index)
            #expect(LatencyHistogram.index(of: low) == index)
            #expect(LatencyHistogram.index(of: low + width - 1) == index)
            if low >= 128 { #expect(Double(width) / Double(low) <= 1.0 / 128) }
        }
    }

    @Test("merging equals recording everything into one histogram")
    func merge() {
        var a = LatencyHistogram()
        var b = LatencyHistogram()
        var all = LatencyHistogram()
        for i in 1...500 {
            let v = Double(i) * 0.0007
            if i % 3 == 0 { a.record(v) } else { b.record(v) }
            all.record(v)
        }
        var merged = a
        merged.merge(b)
        #expect(merged.count == all.count)
        #expect(merged.min == all.min && merged.max == all.max)
        for p in [50.0, 99, 99.9] { #expect(merged.percentile(p) == all.percentile(p)) }
        #expect(abs(merged.sum - all.sum) < 1e-9)
    }

    @Test("memory is fixed and huge, negative and NaN values are clamped")
    func bounded() {
        var h = LatencyHistogram()
        h.record(-1)
        h.record(.nan)
        h.record(1e9)
        #expect(h.count == 3)
        #expect(h.percentile(50) == 0)
        #expect(h.max == 1e9)
        #expect(h.counts.count == LatencyHistogram.bucketCount)
        #expect(LatencyHistogram().percentile(99) == 0)
    }
}
