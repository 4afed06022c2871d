import Foundation
import SoakRecords
import SoakReports
import SoakVerdicts

/// The one report assembly of `run`, `run --processes` and `merge`: from a summary whose
/// measured sections are filled (``MeasuredSummary``) and the verdicts over the run's records,
/// it judges the thresholds, adds the rows and notes every report words the same way, settles
/// the result, writes the report files (``ReportFiles``), prints `summary.txt`, compares with a
/// baseline and writes the JUnit file.
package struct ReportAssembly {
    /// The profile as it ran (flags applied): its thresholds are judged, it is written as `profile.json`.
    var profile: SoakProfile
    var verdicts: VerdictsReport
    /// Every attempt, for the HTML report's per-attempt charts; `nil` leaves them out.
    var attempts: [AttemptRecord]?
    /// Whether the charts are left out because the attempts files are over the read-back limit.
    package var chartsLeftOut = false
    /// Whether the report is merged from shards' reports (the notes then say "the shards'").
    package var fromShards = false
    /// The report's own notes, first: why it cannot be judged, how it was run or merged.
    package var notes: [String] = []
    /// The notes read from the records (``SummaryNotes``), after the report's own.
    package var recordNotes: [String] = []
    /// Why the run (or a shard) was stopped by an abortOnFail threshold: one failed row each.
    package var aborts: [String] = []
    /// Rows that did not reach the disk and files that do not read back whole.
    package var ioProblems: [String] = []
    /// Why the report cannot be judged, when the caller knows (it outranks ``ioProblems``).
    var invalidReason: String?
    /// The signal that stopped the run (exit 130 / 143), else `nil`.
    var signal: StopReason?
    /// The manifest of a shard's report (`run --shard`), written first.
    var shardManifest: ShardManifest?
    /// A shard's health rows (``ShardHealth``): judged instead of the profile's thresholds.
    var shardHealth: [ThresholdResult]?
    /// `--junit FILE`.
    package var junitPath: String?
    /// `--baseline DIR`: compare the report with that one (into `<report>/compare/`).
    var baselineDirectory: String?
    /// Messages for the user.
    var log: @Sendable (String) -> Void

    package init(profile: SoakProfile, verdicts: VerdictsReport, log: @escaping @Sendable (String) -> Void) {
        self.profile = profile
        self.verdicts = verdicts
        self.log = log
    }

    /// Judges `summary`, writes the report into `directory` and returns the exit code: 2 when
    /// the report cannot be written or judged, else the result's (130 / 143 for a signal, 1 for
    /// a failed threshold), the worse of it and the comparison's when there is a baseline.
    package func finish(_ summary: SoakSummary, in directory: URL) -> SoakRunResult {
        var summary = summary
        if let shardHealth {
            RunJudgement.judgeShard(&summary, verdicts: verdicts, health: shardHealth)
        } else {
            RunJudgement.judge(&summary, verdicts: verdicts, thresholds: profile.expect.thresholds)
        }
        // After the "started nothing" row when there is one: that says the most.
        summary.thresholds.insert(
            contentsOf: aborts.map(RunJudgement.abortRow),
            at: summary.journeys.started == 0 && !summary.thresholds.isEmpty ? 1 : 0)
        summary.notes =
            notes + recordNotes + (chartsLeftOut ? [RunJudgement.chartsLeftOutNote(shards: fromShards)] : [])
            + RunJudgement.ioNotes(ioProblems)
        let invalidReason = invalidReason ?? RunJudgement.incompleteReason(ioProblems, shards: fromShards)
        let result = RunJudgement.settle(&summary, invalidReason: invalidReason, signal: signal)
        let contents = ReportContents(
            summary: summary, profile: profile.redactingSecrets(),
            backoff: BackoffTolerances(profile.expect), attempts: attempts,
            shardManifest: shardManifest)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try ReportFiles.write(contents, to: directory)
        } catch {
            log("error: cannot write the report to \(directory.path): \(error.localizedDescription)")
            return SoakRunResult(exitCode: 2, directory: directory, summary: summary, error: "\(error)")
        }
        log(SummaryText.render(summary))
        if let invalidReason {
            // No JUnit file and no comparison: a report that cannot be judged must not read as passed.
            log("error: \(invalidReason)")
            return SoakRunResult(
                exitCode: result.exitCode, directory: directory, summary: summary, error: invalidReason)
        }
        var code = result.exitCode
        var junit = JUnitReport.run(summary)
        if let baselineDirectory {
            var compare = CompareOptions(baselinePath: baselineDirectory, currentPath: directory.path)
            compare.outDirectory = directory.appendingPathComponent("compare").path
            // The run's own report directory, just written: a comparison left there by an earlier
            // run of the same `--out` (replaced with `run --force`) is replaced too.
            compare.overwrite = true
            // A run whose own exit code already fails a gate (a signal, an abortOnFail stop) still gets
            // its comparison; one that passed but was cut at the grace deadline is refused (exit 2).
            compare.allowPartial = code != 0
            let compared = CompareCommand.run(compare, log: log)
            if let comparison = compared.comparison { junit.suites += JUnitReport.compare(comparison).suites }
            // Interrupted runs keep their own code; otherwise the worse of the run's and the comparison's.
            if code < 100 { code = max(code, compared.exitCode) }
            // summary.json's `result` and summary.txt's first line give the exit code, the comparison's included.
            if let settled = summary.result, settled.afterComparison(exitCode: code) != settled {
                summary.result = settled.afterComparison(exitCode: code)
                var rejudged = contents
                rejudged.summary = summary
                do {
                    try ReportFiles.write(rejudged, to: directory)
                } catch {
                    log("error: cannot write the report to \(directory.path): \(error.localizedDescription)")
                    return SoakRunResult(exitCode: 2, directory: directory, summary: summary, error: "\(error)")
                }
            }
        }
        if let junitPath, let error = RunJudgement.writeJUnit(junit, to: junitPath, log: log) {
            return SoakRunResult(exitCode: 2, directory: directory, summary: summary, error: error)
        }
        return SoakRunResult(exitCode: code, directory: directory, summary: summary, error: nil)
    }
}
