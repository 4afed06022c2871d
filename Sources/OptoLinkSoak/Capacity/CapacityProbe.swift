import Foundation
import SoakVerdicts

/// One probe of `optolink-soak capacity`: a rate held for a window, what the SLO terms measured,
/// the generator's health and the verdict (`pass`, `fail`, `invalid`). One entry of
/// `capacity.json`'s `probes`.
package struct CapacityProbe: Sendable, Equatable, Codable {
    /// One SLO term as measured in the probe.
    package struct Term: Sendable, Equatable, Codable {
        package var expression: String
        /// The metric's value (seconds for latencies), `nil` when the probe did not produce it.
        package var observed: Double?
        package var passed: Bool
        /// Why the term could not be judged (metric missing, nothing measured), else `nil`.
        package var message: String?

        package init(expression: String, observed: Double?, passed: Bool, message: String? = nil) {
            self.expression = expression
            self.observed = observed
            self.passed = passed
            self.message = message
        }
    }

    /// 1-based, in the order run.
    package var index: Int
    /// The arrival rate held (journeys/s) and why it was probed.
    package var rate: Double
    package var purpose: CapacitySearch.Purpose
    /// Seconds of the measured window, and of the unmeasured warm-up before it.
    package var seconds: Double
    package var warmupSeconds: Double
    /// `pass`, `fail` or `invalid`.
    package var result: String
    /// The first SLO term that failed (`fail`), or why the probe is `invalid`.
    package var failed: String?
    package var invalidReason: String?
    package var slo: [Term]
    /// Requests (HTTP attempts) per second and journeys started per second in the window.
    package var requestsPerSecond: Double
    package var journeysPerSecond: Double
    /// Share of attempts answered 429 by the declared rate limits: reported, never a capacity failure.
    package var limits429: Double
    package var generator: CapacityGeneratorHealth
    /// The probe's own report directory (summary.json, attempts.csv, …).
    package var report: String
    /// Extra facts worth a line (e.g. the generator lagged behind a failing backend).
    package var note: String?

    package init(
        index: Int, rate: Double, purpose: CapacitySearch.Purpose, seconds: Double, warmupSeconds: Double,
        result: String, failed: String?, invalidReason: String?, slo: [Term], requestsPerSecond: Double,
        journeysPerSecond: Double, limits429: Double, generator: CapacityGeneratorHealth, report: String,
        note: String?
    ) {
        self.index = index
        self.rate = rate
        self.purpose = purpose
        self.seconds = seconds
        self.warmupSeconds = warmupSeconds
        self.result = result
        self.failed = failed
        self.invalidReason = invalidReason
        self.slo = slo
        self.requestsPerSecond = requestsPerSecond
        self.journeysPerSecond = journeysPerSecond
        self.limits429 = limits429
        self.generator = generator
        self.report = report
        self.note = note
    }

    /// The search's view of this probe.
    package var outcome: CapacitySearch.Outcome {
        switch result {
        case "pass": return .pass
        case "fail": return .fail(clause: failed ?? "the SLO")
        default: return .invalid(reason: invalidReason ?? "the generator saturated")
        }
    }

    /// Judges a probe from its SLO terms and the generator's health: `invalid` when the generator
    /// saturated, else `fail` naming the first term that failed, else `pass`.
    package static func verdict(
        terms: [Term], health: CapacityGeneratorHealth, limits: CapacityGeneratorHealth.Limits = .init()
    ) -> (result: String, failed: String?, invalidReason: String?, note: String?) {
        let failing = terms.first { !$0.passed }
        if let reason = health.saturation(sloHeld: failing == nil, limits: limits) {
            return ("invalid", nil, reason, nil)
        }
        guard let failing else { return ("pass", nil, nil, nil) }
        // The generator's lag under a failing backend is back-pressure, worth saying but not a verdict.
        let lag = health.saturation(sloHeld: true, limits: limits).map { "the generator also lagged: \($0)" }
        return ("fail", failing.expression, nil, lag)
    }

    /// The SLO terms measured in `summary` (a term over nothing measured fails: it proves nothing).
    package static func terms(_ slo: [String], in summary: SoakSummary) -> [Term] {
        terms(slo, metrics: summary.metrics, notExercised: SummaryMetrics.notExercised(summary))
    }

    /// The SLO terms over flat `metrics` (`summary.json`'s names); a term whose metric lies under
    /// a prefix of `notExercised` fails with that reason.
    package static func terms(_ slo: [String], metrics: [String: Double], notExercised: [String: String] = [:])
        -> [Term]
    {
        let results = Thresholds.evaluate(slo.map { ThresholdSpec($0) }, metrics: metrics, notExercised: notExercised)
        return results.map {
            Term(
                expression: $0.expression, observed: $0.observed, passed: $0.passed,
                message: $0.notExercised ?? $0.message)
        }
    }

    /// The generator's health as `summary` recorded it, plus the CPU shares measured around the probe.
    package static func health(
        _ summary: SoakSummary, cpuShare: Double?, processCPUShare: Double
    ) -> CapacityGeneratorHealth {
        CapacityGeneratorHealth(
            scheduled: summary.journeys.scheduled, started: summary.journeys.started,
            lateStarts: summary.journeys.lateStarts, dropped: summary.journeys.dropped ?? 0,
            startLagP99: summary.metrics["journeys.start_lag.p99"], cpuShare: cpuShare,
            processCPUShare: processCPUShare)
    }
}
