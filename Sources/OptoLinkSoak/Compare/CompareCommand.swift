import Foundation
import SoakVerdicts
import SoakReports

/// The `compare` subcommand's inputs.
package struct CompareOptions: Sendable, Equatable {
    package var baselinePath: String
    package var currentPath: String
    /// Where `compare.md`, `compare.json` and `report.html` go (default `<CURRENT>/compare/`).
    package var outDirectory: String?
    /// Compare even when the runs' profiles differ (noted in the output).
    package var force = false
    /// Replace an existing comparison in the output directory (`--force` sets it too).
    package var overwrite = false
    package var junitPath: String?
    /// Compare even when a run did not run its course (a stop signal, an early stop, missing
    /// shards, an invalid result): its counts are partial, so without this the answer is exit 2.
    package var allowPartial = false
    /// The default rule's settings (`--alpha`, `--min-shift`, `--floor`).
    package var rules = RegressionRules()

    package init(baselinePath: String, currentPath: String) {
        self.baselinePath = baselinePath
        self.currentPath = currentPath
    }
}

/// `optolink-soak compare BASELINE CURRENT`: exit 0 no regression, 1 regression, 2 could not
/// compare (unreadable report, unknown `schemaVersion`, different profiles without `--force`, a
/// run that did not run its course without `--allow-partial`, or inconclusive).
package enum CompareCommand {
    /// What a compare produced.
    package struct Result: Sendable {
        package var exitCode: Int32
        package var comparison: SoakComparison?
        package var outDirectory: URL?

        init(exitCode: Int32, comparison: SoakComparison? = nil, outDirectory: URL? = nil) {
            self.exitCode = exitCode
            self.comparison = comparison
            self.outDirectory = outDirectory
        }
    }

    /// Runs the comparison and writes its files; never throws (problems become exit code 2).
    package static func run(_ options: CompareOptions, log: @Sendable (String) -> Void) -> Result {
        let baseline: SoakReportDirectory
        let current: SoakReportDirectory
        if PathProblem.samePlace(options.baselinePath, options.currentPath) {
            log("error: the baseline and the current report are the same directory (\(options.currentPath))")
            return Result(exitCode: 2)
        }
        do {
            baseline = try SoakReportDirectory.load(URL(fileURLWithPath: options.baselinePath, isDirectory: true))
            current = try SoakReportDirectory.load(URL(fileURLWithPath: options.currentPath, isDirectory: true))
        } catch {
            log("error: \(error)")
            return Result(exitCode: 2)
        }
        let differs = Self.profilesDiffer(baseline.summary.run, current.summary.run)
        var notes: [String]
        do throws(Refusal) {
            notes = try Self.planNotes(baseline: baseline, current: current, differs: differs, options: options)
            notes += try Self.partialNotes(baseline: baseline, current: current, options: options)
        } catch {
            for line in error.lines { log("error: \(line)") }
            return Result(exitCode: 2)
        }
        let out = URL(
            fileURLWithPath: options.outDirectory ?? current.url.appendingPathComponent("compare").path,
            isDirectory: true)
        if !options.overwrite && !options.force, let existing = existingComparison(in: out) {
            log("error: \(existing) already exists; use --force to overwrite it, or --out DIR to write elsewhere")
            return Result(exitCode: 2)
        }
        let comparison = SoakComparison.compare(
            baseline: baseline, current: current, rules: options.rules, forced: differs, notes: notes)
        do {
            try write(comparison, baseline: baseline, current: current, to: out, junitPath: options.junitPath)
        } catch {
            log("error: cannot write the comparison to \(out.path) (\(error.localizedDescription))")
            return Result(exitCode: 2, comparison: comparison)
        }
        for line in comparison.consoleLines { log(line) }
        log("compare: \(out.appendingPathComponent("compare.md").path)")
        return Result(exitCode: comparison.exitCode, comparison: comparison, outDirectory: out)
    }

    /// Why a comparison cannot go on: each line is one error line, after "error: ".
    private struct Refusal: Error {
        var lines: [String]
    }

    /// Whether the two runs used different profiles (by name or fingerprint).
    private static func profilesDiffer(_ b: SoakSummary.RunMetadata, _ c: SoakSummary.RunMetadata) -> Bool {
        b.profile != c.profile || (b.profileHash != nil && c.profileHash != nil && b.profileHash != c.profileHash)
    }

    /// Notes on how the two runs' plans differ; refuses different profiles without `--force`.
    private static func planNotes(
        baseline: SoakReportDirectory, current: SoakReportDirectory, differs: Bool, options: CompareOptions
    ) throws(Refusal) -> [String] {
        var notes: [String] = []
        let b = baseline.summary.run
        let c = current.summary.run
        if differs {
            let what =
                "the runs' profiles differ: baseline \(b.profile) (\(short(b.profileHash))) vs current "
                + "\(c.profile) (\(short(c.profileHash)))"
            guard options.force else {
                throw Refusal(lines: ["\(what); a comparison would not mean much. Use --force to compare anyway."])
            }
            notes.append("\(what); compared anyway (--force)")
        } else if b.profileHash == nil || c.profileHash == nil {
            notes.append(
                "the \(b.profileHash == nil ? "baseline" : "current") report has no profile fingerprint (an older "
                    + "version wrote it), so it is not verified that both runs used the same profile")
        }
        if current.profileRegression == nil {
            notes.append(
                "the current report has no readable profile.json, so its expect.regression rules (if any) "
                    + "are unknown and the default rule applies")
        }
        if b.seed != c.seed { notes.append("the runs used different seeds (\(b.seed) and \(c.seed))") }
        if b.backend != c.backend || (b.backend == "remote" && b.baseURL != c.baseURL) {
            notes.append("the runs used different backends (\(b.backend) \(b.baseURL), \(c.backend) \(c.baseURL))")
        }
        return notes
    }

    /// Notes for runs that did not run their course; refuses them without `--allow-partial`.
    ///
    /// Counts cut short mostly look better than whole ones, and a partial baseline makes a whole
    /// run look worse: neither is evidence either way unless the user says so.
    private static func partialNotes(
        baseline: SoakReportDirectory, current: SoakReportDirectory, options: CompareOptions
    ) throws(Refusal) -> [String] {
        let partial: [(line: String, why: String)] = [
            ("baseline", baseline.summary, "so it is no reference to compare with"),
            ("current", current.summary, "so it cannot show there is no regression"),
        ].compactMap { name, summary, why in
            Self.partialReason(summary).map {
                ("the \(name) run did not run its course (\($0)): its counts are partial", why)
            }
        }
        guard partial.isEmpty || options.allowPartial else {
            throw Refusal(
                lines: partial.map { "\($0.line), \($0.why). Re-run it, or use --allow-partial to compare anyway." })
        }
        return partial.map { $0.line + "; compared anyway (--allow-partial)" }
    }

    /// Writes `compare.json`, `compare.md`, `report.html` and the optional JUnit file, each atomically.
    private static func write(
        _ comparison: SoakComparison, baseline: SoakReportDirectory, current: SoakReportDirectory, to out: URL,
        junitPath: String?
    ) throws {
        try AtomicFile.writeJSON(comparison, to: out.appendingPathComponent("compare.json"))
        try AtomicFile.write(Data(comparison.markdown().utf8), to: out.appendingPathComponent("compare.md"))
        let html = HTMLReport.compare(
            comparison, baseline: baseline.summary, baselineAttempts: baseline.attempts(), current: current.summary,
            currentAttempts: current.attempts())
        try AtomicFile.write(Data(html.utf8), to: out.appendingPathComponent("report.html"))
        if let junit = junitPath {
            try JUnitReport.compare(comparison).write(to: URL(fileURLWithPath: junit))
        }
    }

    /// Why a run did not run its course, or `nil` when it did: a stop signal, an early stop
    /// (misconfigured, an `abortOnFail` threshold), missing shards (`merge --allow-partial`), or a
    /// report that cannot be judged (`result` `invalid`). A cut at the grace deadline is not one.
    package static func partialReason(_ summary: SoakSummary) -> String? {
        let run = summary.run
        let after = "after \(String(format: "%.1f", run.durationSeconds)) s"
        var reasons: [String] = []
        if run.interrupted || run.stopReason.isSignal {
            let signal =
                run.stopReason == .terminated || summary.result == .terminated
                ? "SIGTERM" : run.stopReason == .interrupted || summary.result == .interrupted ? "SIGINT" : "a signal"
            reasons.append("stopped by \(signal) \(after)")
        }
        // A run cut at its grace deadline (no signal) ran its whole plan: only calls still in flight
        // at the cutoff were cancelled, by the profile's design (a Retry-After sleep of up to 60 s),
        // as in any other run of that profile. It is a whole run, so not refused.
        switch run.stopReason {
        case .misconfigured: reasons.append("stopped early \(after): every response was refused (misconfigured)")
        case .thresholdAborted: reasons.append("stopped early \(after): an abortOnFail threshold failed")
        case .completed, .duration, .iterations, .deadline, .interrupted, .terminated: break
        }
        if let missing = run.shards?.missing, !missing.isEmpty, let count = run.shards?.count {
            reasons.append("shards \(missing.map { "\($0)/\(count)" }.joined(separator: ", ")) are missing")
        }
        if summary.result == .invalid && run.stopReason != .misconfigured {
            reasons.append("its result is invalid, see its notes")
        }
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
    }

    /// The first comparison file already in `directory`, or `nil`.
    static func existingComparison(in directory: URL) -> String? {
        ["compare.json", "compare.md", "report.html"].lazy.map { directory.appendingPathComponent($0).path }
            .first { FileManager.default.fileExists(atPath: $0) }
    }

    private static func short(_ hash: String?) -> String {
        hash.map { "profile \($0.prefix(12))…" } ?? "no fingerprint"
    }
}
