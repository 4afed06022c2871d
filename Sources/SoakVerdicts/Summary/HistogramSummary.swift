import SoakRecords
/// A latency histogram as `summary.json` stores it: seconds, nearest-rank percentiles
/// within the histogram's stated relative precision (≤ 1 %), plus its non-empty buckets
/// (`[lowest value in seconds, count]`) so histograms from several runs can be merged.
public struct HistogramSummary: Sendable, Codable, Equatable {
    /// Number of samples.
    public var count: UInt64
    /// Smallest sample, seconds.
    public var min: Double
    /// Mean, seconds.
    public var mean: Double
    /// Median (nearest rank), seconds.
    public var p50: Double
    /// 90th percentile (nearest rank), seconds.
    public var p90: Double
    /// 95th percentile (nearest rank), seconds.
    public var p95: Double
    /// 99th percentile (nearest rank), seconds.
    public var p99: Double
    /// 99.9th percentile (nearest rank), seconds.
    public var p999: Double
    /// Largest sample, seconds.
    public var max: Double
    /// Non-empty buckets as `[lowest value in seconds, count]` pairs, ascending.
    public var buckets: [[Double]]

    package init(_ histogram: LatencyHistogram) {
        count = histogram.count
        min = histogram.min
        mean = histogram.mean
        p50 = histogram.percentile(50)
        p90 = histogram.percentile(90)
        p95 = histogram.percentile(95)
        p99 = histogram.percentile(99)
        p999 = histogram.percentile(99.9)
        max = histogram.max
        buckets = histogram.nonEmptyBuckets.map { [$0.low, Double($0.count)] }
    }

    /// The percentiles by their metric suffix (`p50` … `p999`, `max`, `mean`), in seconds.
    package var namedValues: [String: Double] {
        ["p50": p50, "p90": p90, "p95": p95, "p99": p99, "p999": p999, "max": max, "mean": mean, "min": min]
    }
}
