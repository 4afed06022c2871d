import Foundation
import SoakVerdicts

/// The `summary.txt` line on the load generator itself: how many journeys started late (in all
/// and in the worst second) against the profile's `expect.lateStartLimit`, and the CPU the
/// generator used. A run whose late starts exceed the limit measured its own arrival schedule as
/// much as the backend (coordinated omission moved into the generator), so the summary says so in
/// its first lines (``isLimit(_:)``).
package enum GeneratorLine {
    /// The limit `s` is judged against: its `lateStartLimit`, or the default when the report has none.
    static func limit(_ s: SoakSummary) -> Double {
        s.journeys.lateStartLimit ?? VerdictsConfiguration.defaultLateStartLimit
    }

    /// Whether more journeys started late than the limit allows.
    package static func isLimit(_ s: SoakSummary) -> Bool {
        s.journeys.started > 0 && GeneratorHealth.lateStartRate(s.journeys) > limit(s)
    }

    /// The most late starts in one second of the run, from its timeline.
    static func worstSecond(_ s: SoakSummary) -> Double {
        guard s.intervalSeconds > 0 else { return 0 }
        return Double(s.timeline.map(\.lateStarts).max() ?? 0) / s.intervalSeconds
    }

    /// `generator: …` in words; the verdict leads, so the line reads the same in the headline.
    package static func render(_ s: SoakSummary) -> String {
        let journeys = s.journeys
        let rate = GeneratorHealth.lateStartRate(journeys)
        let threshold = String(format: "%.0fms", journeys.lateThresholdSeconds * 1000)
        var late =
            "\(journeys.lateStarts) of \(journeys.started) journeys started over \(threshold) late "
            + "(\(percent(rate)), limit \(percent(limit(s))))"
        if journeys.lateStarts > 0 {
            late += ", at most \(SummaryText.compact(worstSecond(s))) late starts in a second"
        }
        var cpu = ""
        if let use = s.run.generator {
            cpu =
                "; CPU " + String(format: "%.2f", use.cpuSeconds / Swift.max(use.wallSeconds, 1e-9))
                + " of \(use.cores) cores (\(percent(use.share))"
                + (use.withEmbeddedBackend ? ", the embedded emulator included)" : ")")
        }
        if s.run.loadModel == "closed" {
            return "generator: closed model, no arrival plan to keep (each worker starts its next journey when "
                + "the last ends)\(cpu)"
        }
        guard isLimit(s) else { return "generator: kept to its plan — \(late)\(cpu)" }
        return "generator: THE LIMIT, it fell behind its arrival plan — \(late)\(cpu). Latencies and capacity "
            + "in this run describe the generator as much as the backend: give it more CPU (fewer processes on "
            + "its cores, run --processes) or a lower rate"
    }

    /// `0.4 %`, `12 %`: one decimal below 10 %.
    static func percent(_ share: Double) -> String {
        share * 100 < 10 ? String(format: "%.1f %%", share * 100) : String(format: "%.0f %%", share * 100)
    }
}
