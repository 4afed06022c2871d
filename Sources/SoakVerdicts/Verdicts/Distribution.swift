import SoakRecords
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

/// Values for a ``Distribution`` in bounded memory: exact up to `capacity` values; past that,
/// every other (sorted) value is dropped and each kept one stands for twice as many, so
/// percentiles become nearest-rank over the thinned sample (min, max and count stay exact).
package struct DistributionSketch {
    package private(set) var values: [Double] = []
    /// Values seen (finite ones).
    private(set) var count = 0
    /// How many seen values each kept one stands for (a power of two).
    private(set) var weight = 1
    private var low = Double.infinity
    private var high = -Double.infinity
    package let capacity: Int

    package init(capacity: Int = 65_536) { self.capacity = max(16, capacity) }

    package mutating func append(_ value: Double) {
        guard value.isFinite else { return }
        count += 1
        low = Swift.min(low, value)
        high = Swift.max(high, value)
        // With weight w, one value in w is kept (the count decides which, so the thinning is deterministic).
        guard (count - 1) % weight == 0 else { return }
        values.append(value)
        if values.count > capacity {
            values.sort()
            values = values.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
            weight *= 2
        }
    }

    /// The distribution: exact while nothing was thinned.
    package var distribution: Distribution {
        var result = Distribution(values)
        guard weight > 1, count > 0 else { return result }
        result.count = count
        result.min = low
        result.max = high
        return result
    }
}
