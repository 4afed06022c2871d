import Foundation

/// How well one run's load generator kept to its plan, from `summary.json`: how late journeys
/// started, how many started later than the run's late threshold, and how many planned arrivals
/// never started. A generator that fell behind measured the machine, not the backend, so a
/// latency shift against such a run cannot be told from the machine's.
package struct GeneratorHealth: Sendable, Codable, Equatable {
    /// The driver's start lag p99, seconds.
    package var startLagP99: Double
    /// Late starts per started journey.
    package var lateStartRate: Double
    /// Planned arrivals that never started (open model).
    package var dropped: Int
    /// Why the generator was unhealthy, in words; empty when it was healthy.
    package var problems: [String]

    package var healthy: Bool { problems.isEmpty }

    /// The health of the run `summary` describes, judged against `rules`' limits.
    package static func of(_ summary: SoakSummary, rules: RegressionRules) -> GeneratorHealth {
        let journeys = summary.journeys
        let lateRate = lateStartRate(journeys)
        let dropped = journeys.dropped ?? 0
        var problems: [String] = []
        if journeys.startLag.p99 > rules.healthyStartLagP99Seconds {
            problems.append(
                "start lag p99 \(SoakComparison.formatSeconds(journeys.startLag.p99)) (over "
                    + "\(SoakComparison.formatSeconds(rules.healthyStartLagP99Seconds)))")
        }
        if lateRate > rules.healthyLateStartRate {
            problems.append(
                String(
                    format: "%d of %d journeys started late (%.1f%%, over ", journeys.lateStarts, journeys.started,
                    lateRate * 100)
                    + "\(ThresholdResult.format(rules.healthyLateStartRate * 100))%)")
        }
        if dropped > 0 { problems.append("\(dropped) planned arrivals never started") }
        return GeneratorHealth(
            startLagP99: journeys.startLag.p99, lateStartRate: lateRate, dropped: dropped, problems: problems)
    }

    /// Late starts per started journey (0 when none started): the metric
    /// `journeys.late_starts.rate`, the share `compare` and the run's generator line judge.
    package static func lateStartRate(_ journeys: SoakSummary.JourneySummary) -> Double {
        journeys.started > 0 ? Double(journeys.lateStarts) / Double(journeys.started) : 0
    }
}
