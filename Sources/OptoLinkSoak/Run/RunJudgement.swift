import Foundation

/// What `run` and `merge` both do once a run's summary sections and verdicts are known:
/// derive the flat metrics, judge the thresholds on them, and write the report files.
package enum RunJudgement {
    /// Fills `summary.metrics`, `summary.verdicts` and `summary.thresholds` (the profile's
    /// `thresholds` plus ``DroppedArrivalsThreshold`` when arrivals were dropped, then the
    /// "started nothing" check). `summary.notes` is left to the caller.
    package static func judge(_ summary: inout SoakSummary, verdicts: VerdictsReport, thresholds: [ThresholdSpec]) {
        var metrics = SummaryMetrics.build(summary)
        metrics.merge(verdicts.metrics()) { _, verdict in verdict }
        summary.metrics = metrics
        summary.verdicts = verdicts
        summary.thresholds = Thresholds.evaluate(
            DroppedArrivalsThreshold.adding(to: thresholds, dropped: summary.journeys.dropped),
            metrics: metrics,
            notExercised: verdicts.notExercised().merging(SummaryMetrics.notExercised(summary)) { verdict, _ in verdict
            })
        if summary.journeys.started == 0 {
            summary.thresholds.insert(
                ThresholdResult(
                    expression: "journeys.started > 0", metric: "journeys.started", observed: nil, limit: 0,
                    passed: false,
                    message: "the run started no journey, so it tested nothing (load.startRate and every stage "
                        + "target 0? load.iterations 0?)"), at: 0)
        }
    }

    /// Writes `summary.json`, `profile.json`, `summary.txt` and `report.html` into `directory`,
    /// each atomically. `attempts` feeds the report's per-attempt charts (`nil`: left out).
    /// - Throws: the file-system error of the first file that cannot be written.
    package static func writeReport(
        _ summary: SoakSummary, profile: SoakProfile, attempts: [AttemptRecord]?, to directory: URL
    ) throws {
        try AtomicFile.writeJSON(summary, to: directory.appendingPathComponent("summary.json"))
        try AtomicFile.writeJSON(profile, to: directory.appendingPathComponent("profile.json"))
        try AtomicFile.write(
            Data(SummaryText.render(summary).utf8), to: directory.appendingPathComponent("summary.txt"))
        let html = HTMLReport.run(
            summary, attempts: attempts, earlySlackSeconds: profile.expect.backoffEarlySlackSeconds)
        try AtomicFile.write(Data(html.utf8), to: directory.appendingPathComponent("report.html"))
    }
}
