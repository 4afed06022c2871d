import Foundation
import SoakRecords
import SoakSupport
import SoakVerdicts

/// A report's summary before it is judged: the run's metadata, the client-side sections and the
/// timeline from a ``RecorderTally`` (one run's, or the shards' added together), RSS samples and
/// the server's counts. `run` and `merge` build it the same way.
package enum MeasuredSummary {
    package static func build(
        run: SoakSummary.RunMetadata, tally: RecorderTally, outage: OutagePlan?, loadModel: LoadSettings.Model,
        scheduled: Int, rss: [SoakSummary.RSSSample], counters: JSONValue?, ledgerEntries: Int?
    ) -> SoakSummary {
        let parts = tally.summaryParts(activeSeconds: run.durationSeconds, outage: outage)
        var journeys = parts.journeys
        journeys.scheduled = scheduled
        // The closed model plans no arrivals, so none can be dropped.
        if loadModel == .closed { journeys.dropped = nil }
        var summary = SoakSummary(
            run: run, journeys: journeys, endpoints: parts.endpoints, totals: parts.totals,
            deferredMatch: parts.deferred, clicks: parts.clicks, opens: parts.opens, rss: rss,
            server: ledgerEntries == nil && counters == nil
                ? nil : .init(counters: counters, ledgerEntries: ledgerEntries),
            metrics: [:], verdicts: nil, thresholds: [])
        summary.timeline = tally.intervalSummary(activeSeconds: run.durationSeconds)
        summary.intervalSeconds = tally.interval
        return summary
    }

    /// `run.startedAt`: the Unix time `epoch` as ISO 8601 with fractional seconds.
    package static func timestamp(_ epoch: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: epoch))
    }
}
