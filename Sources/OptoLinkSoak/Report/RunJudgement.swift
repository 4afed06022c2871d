import Foundation
import SoakRecords
import SoakVerdicts
import SoakReports

/// The steps of ``ReportAssembly`` that judge a summary: derive the flat metrics, judge the
/// thresholds on them, word the rows and notes every report shares (the abortOnFail row, I/O
/// problems, charts left out), settle the result, and write the JUnit file.
package enum RunJudgement {
    /// Fills `summary.metrics`, `summary.verdicts` and `summary.thresholds` (the profile's
    /// `thresholds` plus ``DroppedArrivalsThreshold`` when arrivals were dropped, then the
    /// "started nothing" check). `summary.notes` is left to the caller.
    package static func judge(_ summary: inout SoakSummary, verdicts: VerdictsReport, thresholds: [ThresholdSpec]) {
        let metrics = fillMetrics(&summary, verdicts: verdicts)
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

    /// Fills `summary.metrics` and `summary.verdicts` as ``judge(_:verdicts:thresholds:)`` does, and
    /// sets `summary.thresholds` to a shard's ``ShardHealth`` rows instead of the profile's
    /// thresholds (those are judged once, by `merge`, on the whole).
    package static func judgeShard(_ summary: inout SoakSummary, verdicts: VerdictsReport, health: [ThresholdResult]) {
        fillMetrics(&summary, verdicts: verdicts)
        summary.thresholds = health
    }

    @discardableResult
    private static func fillMetrics(_ summary: inout SoakSummary, verdicts: VerdictsReport) -> [String: Double] {
        var metrics = SummaryMetrics.build(summary)
        metrics.merge(verdicts.metrics()) { _, verdict in verdict }
        summary.metrics = metrics
        summary.verdicts = verdicts
        return metrics
    }

    /// The failed `abortOnFail` row a run stopped by an abortOnFail threshold reports, saying why.
    package static func abortRow(_ message: String) -> ThresholdResult {
        ThresholdResult(
            expression: "abortOnFail", metric: nil, observed: nil, limit: nil, passed: false, message: message)
    }

    /// The note of a report whose per-attempt charts are left out because its `attempts.csv`
    /// (`shards`: the shards' files together) is over the read-back limit.
    package static func chartsLeftOutNote(shards: Bool) -> String {
        let files = shards ? "the shards' attempts.csv files are" : "attempts.csv is"
        let megabytes = SoakReportDirectory.chartAttemptsLimitBytes / 1_048_576
        return "report.html: \(files) over \(megabytes) MB\(shards ? " together" : ""), so the charts read from "
            + "\(shards ? "them" : "it") (latency over time, back-off, limit windows) are left out to keep memory flat"
    }

    /// One `report I/O failed: …` note per problem.
    package static func ioNotes(_ ioProblems: [String]) -> [String] {
        ioProblems.map { "report I/O failed: \($0)" }
    }

    /// Why a report whose files had `ioProblems` cannot be judged (`shards`: a merged report's
    /// shards had them); `nil` when there were none.
    package static func incompleteReason(_ ioProblems: [String], shards: Bool) -> String? {
        guard !ioProblems.isEmpty else { return nil }
        let report = shards ? "a shard's report is incomplete, so the merged" : "the report is incomplete, so its"
        return "\(report) verdicts cannot be trusted: " + ioProblems.joined(separator: "; ")
    }

    /// Sets and returns `summary.result`: a reason the run cannot be judged wins, then the signal
    /// that stopped it, then the thresholds (``RunResult/judge(invalidReason:signal:thresholds:)``).
    @discardableResult
    package static func settle(_ summary: inout SoakSummary, invalidReason: String?, signal: StopReason?)
        -> RunResult
    {
        let result = RunResult.judge(invalidReason: invalidReason, signal: signal, thresholds: summary.thresholds)
        summary.result = result
        return result
    }

    /// Writes `junit` to `path`; on failure logs `error: --junit <path>: cannot write (…)` and
    /// returns the error's description (the command then exits 2).
    package static func writeJUnit(_ junit: JUnitReport, to path: String, log: (String) -> Void) -> String? {
        do {
            try junit.write(to: URL(fileURLWithPath: path))
            return nil
        } catch {
            log("error: --junit \(path): cannot write (\(error.localizedDescription))")
            return "\(error)"
        }
    }
}
