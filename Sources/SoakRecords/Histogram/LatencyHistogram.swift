/// An HDR-style log-linear latency histogram with bounded memory and a stated relative precision.
///
/// Values are durations in **seconds**, stored as whole nanoseconds. Values below 128 ns get
/// one bucket each; above that every power-of-two octave is split into 128 equal linear
/// sub-buckets, so a bucket is at most 1/128 of its lower bound wide. A percentile reports
/// its bucket's midpoint (clamped to the exact min/max), so it is within **0.4 %** of the
/// true order statistic — the documented precision is "≤ 1 %" (`relativePrecision`).
///
/// Memory is fixed: `bucketCount` counters (≈ 40 KB) whatever the number of samples, so an
/// hour-long soak does not grow. Values above `maxTrackable` (≈ 9.7 h) land in the top
/// bucket; `max` still records them exactly. Two histograms merge by adding counters.
package struct LatencyHistogram: Sendable, Equatable {
    /// Linear sub-buckets per octave (2⁷).
    static let subBuckets = 128
    static let subBucketBits = 7
    /// Highest tracked octave: values up to 2⁴⁵ ns (≈ 9.7 h).
    static let maxBit = 44
    /// Number of counters: the exact range plus one block of 128 per octave 7…44.
    package static let bucketCount = subBuckets + (maxBit - subBucketBits + 1) * subBuckets
    /// The stated bound on |percentile − exact order statistic| / exact (1 %).
    package static let relativePrecision = 0.01
    /// The largest value (seconds) with full precision.
    package static let maxTrackable = Double(UInt64(1) << UInt64(maxBit + 1)) / 1e9

    package private(set) var counts: [UInt64]
    /// Number of recorded values.
    package private(set) var count: UInt64 = 0
    /// Exact smallest and largest recorded values in seconds (0 when empty).
    package private(set) var min: Double = 0
    package private(set) var max: Double = 0
    /// Sum of recorded values in seconds (for the mean).
    package private(set) var sum: Double = 0

    package init() {
        counts = [UInt64](repeating: 0, count: Self.bucketCount)
    }

    /// Records one duration in seconds. Negative values and NaN count as 0.
    package mutating func record(_ seconds: Double) {
        let value = seconds.isFinite && seconds > 0 ? seconds : 0
        let nanos = value >= Self.maxTrackable ? (UInt64(1) << UInt64(Self.maxBit + 1)) - 1 : UInt64(value * 1e9)
        counts[Self.index(of: nanos)] += 1
        if count == 0 {
            min = value
            max = value
        } else {
            min = Swift.min(min, value)
            max = Swift.max(max, value)
        }
        count += 1
        sum += value
    }

    /// Adds every count of `other` into this histogram.
    package mutating func merge(_ other: LatencyHistogram) {
        guard other.count > 0 else { return }
        for i in 0..<counts.count where other.counts[i] != 0 {
            counts[i] += other.counts[i]
        }
        min = count == 0 ? other.min : Swift.min(min, other.min)
        max = count == 0 ? other.max : Swift.max(max, other.max)
        count += other.count
        sum += other.sum
    }

    /// Mean in seconds (0 when empty).
    package var mean: Double { count == 0 ? 0 : sum / Double(count) }

    /// The nearest-rank percentile in seconds: the value at rank ⌈p/100 · count⌉ (at least 1,
    /// computed in integers by ``NearestRank``), within ``relativePrecision``. `p` in 0…100;
    /// 100 returns the exact max. 0 when empty.
    package func percentile(_ p: Double) -> Double {
        guard count > 0 else { return 0 }
        if p >= 100 { return max }
        let rank = NearestRank.rank(percentile: p, count: count)
        var seen: UInt64 = 0
        for (i, c) in counts.enumerated() where c != 0 {
            seen += c
            if seen >= rank {
                let (low, width) = Self.bounds(of: i)
                let mid = (Double(low) + Double(width - 1) / 2) / 1e9
                return Swift.min(Swift.max(mid, min), max)
            }
        }
        return max
    }

    /// How many recorded values are at least `seconds`, to the histogram's precision (every
    /// value in the bucket of `seconds` or above counts).
    package func count(atLeast seconds: Double) -> UInt64 {
        let value = seconds.isFinite && seconds > 0 ? seconds : 0
        guard value < Self.maxTrackable else { return counts[counts.count - 1] }
        let first = Self.index(of: UInt64(value * 1e9))
        return counts[first...].reduce(0, +)
    }

    /// Bucket index of a value in nanoseconds.
    package static func index(of nanos: UInt64) -> Int {
        if nanos < UInt64(subBuckets) { return Int(nanos) }
        let msb = 63 - nanos.leadingZeroBitCount
        let shift = msb - subBucketBits
        let sub = Int(nanos >> UInt64(shift)) - subBuckets
        return subBuckets + shift * subBuckets + sub
    }

    /// Lowest value (ns) and width (ns) of bucket `index`.
    package static func bounds(of index: Int) -> (low: UInt64, width: UInt64) {
        if index < subBuckets { return (UInt64(index), 1) }
        let shift = (index - subBuckets) / subBuckets
        let sub = (index - subBuckets) % subBuckets
        let low = UInt64(subBuckets + sub) << UInt64(shift)
        return (low, UInt64(1) << UInt64(shift))
    }

    /// The non-empty buckets as (lowest value in seconds, count), ascending — the sparse
    /// form `summary.json` stores so histograms from several runs can be merged offline.
    package var nonEmptyBuckets: [(low: Double, count: UInt64)] {
        counts.enumerated().compactMap { i, c in
            c == 0 ? nil : (Double(Self.bounds(of: i).low) / 1e9, c)
        }
    }
}

/// The lossless form a shard writes for `merge`: every non-empty bucket by index with its
/// count, plus the exact count, min, max and sum. Decoding it gives back an equal histogram,
/// so merging decoded shards is the same as having recorded every sample in one histogram.
///
/// JSON shape: `{"count": 3, "min": 0.0012, "max": 0.0031, "sum": 0.0061, "buckets": [[1234, 2], [1400, 1]]}`
/// (seconds; `buckets` holds `[index, count]` pairs in ascending index order).
extension LatencyHistogram: Codable {
    private enum CodingKeys: String, CodingKey { case count, min, max, sum, buckets }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(count, forKey: .count)
        try c.encode(min, forKey: .min)
        try c.encode(max, forKey: .max)
        try c.encode(sum, forKey: .sum)
        let pairs = counts.enumerated().compactMap { index, value in value == 0 ? nil : [UInt64(index), value] }
        try c.encode(pairs, forKey: .buckets)
    }

    /// - Throws: `DecodingError.dataCorrupted` when a bucket index is out of range, appears
    ///   twice, or the bucket counts do not add up to `count`.
    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init()
        let pairs = try c.decode([[UInt64]].self, forKey: .buckets)
        var total: UInt64 = 0
        for pair in pairs {
            guard pair.count == 2, pair[0] < UInt64(Self.bucketCount), counts[Int(pair[0])] == 0, pair[1] > 0 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .buckets, in: c,
                    debugDescription: "bucket \(pair) is not a distinct [index < \(Self.bucketCount), count > 0] pair")
            }
            counts[Int(pair[0])] = pair[1]
            let (sum, overflow) = total.addingReportingOverflow(pair[1])
            guard !overflow else {
                throw DecodingError.dataCorruptedError(
                    forKey: .buckets, in: c, debugDescription: "bucket counts overflow")
            }
            total = sum
        }
        count = try c.decode(UInt64.self, forKey: .count)
        guard total == count else {
            throw DecodingError.dataCorruptedError(
                forKey: .count, in: c, debugDescription: "count \(count) differs from the buckets' total \(total)")
        }
        min = try c.decode(Double.self, forKey: .min)
        max = try c.decode(Double.self, forKey: .max)
        sum = try c.decode(Double.self, forKey: .sum)
    }
}
