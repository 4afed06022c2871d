/// A latency histogram as `summary.json` stores it: seconds, nearest-rank percentiles
/// within the histogram's stated relative precision (≤ 1 %), plus its non-empty buckets
/// (`[lowest value in seconds, count]`) so histograms from several runs can be merged.
public struct HistogramSummary: Sendable, Codable, Equatable {
    public var count: UInt64
    public var min: Double
    public var mean: Double
    public var p50: Double
    public var p90: Double
    public var p95: Double
    public var p99: Double
    public var p999: Double
    public var max: Double
    public var buckets: [[Double]]

    public init(_ histogram: LatencyHistogram) {
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
    public var namedValues: [String: Double] {
        ["p50": p50, "p90": p90, "p95": p95, "p99": p99, "p999": p999, "max": max, "mean": mean, "min": min]
    }
}
