import Foundation
import Testing

@testable import OptoLinkSoak

@Suite("HDR histogram")
struct LatencyHistogramTests {
    /// Nearest-rank percentile of sorted values (the definition the histogram approximates).
    static func exact(_ sorted: [Double], _ p: Double) -> Double {
        let rank = max(1, Int((p / 100 * Double(sorted.count)).rounded(.up)))
        return sorted[min(rank, sorted.count) - 1]
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
            let exact = Self.exact(values, p)
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
