/// Percentiles of a small set of values (nearest rank), for report sections; seconds.
package struct Distribution: Sendable, Codable, Equatable {
    package var count: Int
    package var min: Double?
    package var p50: Double?
    package var p90: Double?
    package var p99: Double?
    package var max: Double?

    package init(_ values: [Double]) {
        let sorted = values.filter { $0.isFinite }.sorted()
        count = sorted.count
        func rank(_ q: Double) -> Double? {
            NearestRank.index(percentile: q * 100, count: sorted.count).map { sorted[$0] }
        }
        min = sorted.first
        p50 = rank(0.50)
        p90 = rank(0.90)
        p99 = rank(0.99)
        max = sorted.last
    }

    /// The metric suffixes ``addMetrics(prefix:to:)`` writes.
    static let metricSuffixes = ["min", "p50", "p90", "p99", "max"]

    /// Adds `prefix.p50` … `prefix.max` for the values present.
    func addMetrics(prefix: String, to metrics: inout [String: Double]) {
        for (name, value) in [("min", min), ("p50", p50), ("p90", p90), ("p99", p99), ("max", max)] {
            if let value { metrics["\(prefix).\(name)"] = value }
        }
    }
}
