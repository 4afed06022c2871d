/// How fast a run's resident memory grew, from its RSS samples (`summary.json` `rss`).
package enum RSSGrowth {
    /// RSS growth in MiB per hour: the least-squares slope of `bytes` over `t` for the samples of
    /// the second half of the run (the first half is warm-up); `nil` with fewer than 3 of them.
    package static func growthMiBPerHour(_ samples: [SoakSummary.RSSSample]) -> Double? {
        guard let end = samples.map(\.t).max() else { return nil }
        let late = samples.filter { $0.t >= end / 2 }
        guard late.count >= 3 else { return nil }
        let n = Double(late.count)
        let meanT = late.reduce(0) { $0 + $1.t } / n
        let meanB = late.reduce(0) { $0 + Double($1.bytes) } / n
        let sxx = late.reduce(0) { $0 + ($1.t - meanT) * ($1.t - meanT) }
        guard sxx > 0 else { return nil }
        let sxy = late.reduce(0) { $0 + ($1.t - meanT) * (Double($1.bytes) - meanB) }
        return sxy / sxx * 3600 / 1_048_576
    }
}
