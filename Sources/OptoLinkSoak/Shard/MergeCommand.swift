import Foundation
import OptoLinkStaging
import SoakSupport
import SoakRecords
import SoakVerdicts
import SoakReports

/// The `merge` subcommand's inputs.
package struct MergeOptions: Sendable, Equatable {
    /// The shards' report directories (each written by `run --shard I/N`).
    package var directories: [String]
    /// Where the merged report goes (required on the command line).
    package var outDirectory: String?
    /// Merge even when shards are missing; the report then names them.
    package var allowPartial = false
    /// Write into an `outDirectory` that already holds a report.
    package var force = false
    /// The server ledger exported from the real backend (a JSON array, or JSON lines), for reconciliation.
    package var ledgerPath: String?
    /// `--ledger-wait SECONDS`: how long to wait at most for the `--ledger` file to catch up.
    package var ledgerWaitSeconds = SoakRunOptions.defaultLedgerWaitSeconds
    /// Also write the thresholds and verdicts as JUnit XML there.
    package var junitPath: String?
    /// `--threshold EXPR` (repeatable): thresholds added to the profile's for the merged judgement.
    package var extraThresholds: [String] = []
    /// `--no-thresholds`: judge without the profile's own thresholds (`--threshold` ones still apply).
    package var noThresholds = false

    package init(directories: [String]) { self.directories = directories }
}

/// `optolink-soak merge DIR... --out DIR`: one report, and one set of verdicts and threshold
/// results, from the shards of one plan, as a single process running the whole plan would have
/// written them.
///
/// - Refuses (exit 2) shards of different plans (``ShardManifest/planHash``), two reports of
///   the same shard, and a missing shard unless ``MergeOptions/allowPartial`` (then the report
///   names the missing shards in `run.shards.missing` and in its notes).
/// - Adds the shards' ``RecorderTally``s: counts add, histograms add bucket by bucket, so every
///   merged percentile is that of the union of samples within the histogram's stated precision.
/// - Re-runs every verdict over the union of the shards' records, streamed from their CSVs in
///   time order (a per-IP or per-key limit window spans shards; only the whole shows a breach).
/// - Judges the profile's thresholds on the merged metrics; exit 0 all passed, 1 one failed,
///   2 could not merge (or a shard's report is incomplete).
package enum MergeCommand {
    /// What a merge produced: the same as a run (`error`: why the merge could not be done or
    /// judged, exit code 2).
    package typealias Result = SoakRunResult

    /// What the caller knows beyond the shards' directories (`run --processes` hosts the
    /// emulator itself, so it hands over its ledger and counters).
    package struct Extras: Sendable {
        package var ledger: [LedgerRow]?
        package var counters: JSONValue?
        /// A signal that stopped the whole run (`run --processes`): exit 130/143.
        package var signal: StopReason?
        /// Notes to add to the merged report (e.g. shards that never wrote a report).
        package var notes: [String] = []
        /// Why the merged run cannot be judged although the merge itself works (`run --processes`:
        /// a shard failed or wrote no report): `result` `invalid`, exit 2.
        package var invalidReason: String?
        /// The backend kind to report (`embedded` when `run --processes` hosted the emulator;
        /// default: what the shards saw).
        package var backendKind: String?
        /// Thresholds added to the profile's (`merge --threshold`), and whether the profile's own
        /// are dropped (`--no-thresholds`).
        var thresholds: [ThresholdSpec] = []
        var noThresholds = false
        /// The ledger came from `--ledger FILE`, which may not have caught up with the shards' writes.
        var ledgerMayLag = false
        /// What the wait for a `--ledger` file reads and sleeps on (tests step a virtual time).
        package var ledgerWaitClock = BlockingWaitClock.system
        package init(ledger: [LedgerRow]? = nil, counters: JSONValue? = nil, signal: StopReason? = nil) {
            self.ledger = ledger
            self.counters = counters
            self.signal = signal
        }
    }

    /// Merges and writes the report; never throws (problems become exit code 2).
    package static func run(
        _ options: MergeOptions, extras: Extras = Extras(), log: @escaping @Sendable (String) -> Void
    ) -> Result {
        func fail(_ message: String) -> Result {
            log("error: \(message)")
            return Result(exitCode: 2, directory: nil, summary: nil, error: message)
        }
        guard let out = options.outDirectory else { return fail("merge: --out DIR is required") }
        guard !options.directories.isEmpty else { return fail("merge: needs at least one shard report directory") }
        for expression in options.extraThresholds {
            if let problem = Thresholds.problem(in: expression) {
                return fail("--threshold '\(expression)': \(problem)")
            }
        }
        if let problem = PathProblem.reportDirectory(out, force: options.force) { return fail(problem) }
        var shards: [(url: URL, manifest: ShardManifest)] = []
        var skipped: [String] = []
        for path in options.directories {
            let url = URL(fileURLWithPath: path, isDirectory: true)
            var isDirectory: ObjCBool = false
            let manifestPath = url.appendingPathComponent(ShardManifest.fileName).path
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
                isDirectory.boolValue, !FileManager.default.fileExists(atPath: manifestPath)
            {
                // A shard that started but never finished its report (killed, out of memory,
                // or it could not run at all).
                guard options.allowPartial else {
                    return fail(
                        "merge: \(path) has no \(ShardManifest.fileName): it is not a shard's report (write one "
                            + "with `run PROFILE --shard I/N --base-url URL`), or that shard did not finish (killed, "
                            + "or it could not run: see its log). Pass --allow-partial to merge the other shards "
                            + "without it (the report then names it as missing)")
                }
                skipped.append(path)
                continue
            }
            do {
                shards.append((url, try ShardManifest.load(url)))
            } catch {
                return fail("\(error)")
            }
        }
        guard !shards.isEmpty else {
            return fail("merge: none of the directories holds a finished shard's report (\(ShardManifest.fileName))")
        }
        let plan: Plan
        do {
            plan = try Plan.check(shards, allowPartial: options.allowPartial)
        } catch {
            return fail("\(error)")
        }
        var extras = extras
        var ledger = extras.ledger
        if let path = options.ledgerPath {
            if AdminLedgerReader.url(path) != nil {
                return fail(
                    "merge --ledger \(path): give a file (export GET /__admin/ledger?until=EPOCH to one); "
                        + "only run reads an emulator's ledger route")
            }
            let url = URL(fileURLWithPath: path)
            let waited = LedgerCatchUp.waitBlocking(
                for: url, through: plan.shards.compactMap(\.manifest.lastWriteEpoch).max(),
                limit: options.ledgerWaitSeconds, clock: extras.ledgerWaitClock)
            if let note = waited.note { extras.notes.append(note) }
            do {
                ledger = try RemoteBackend.readLedger(url)
            } catch {
                return fail("\(error)")
            }
            extras.ledgerMayLag = true
        }
        let outURL = URL(fileURLWithPath: out, isDirectory: true)
        extras.thresholds = options.extraThresholds.map(ThresholdSpec.init)
        extras.noThresholds = options.noThresholds
        extras.notes += skipped.map {
            "\($0): no \(ShardManifest.fileName) (the shard did not finish its report); left out"
        }
        return merge(plan, ledger: ledger, extras: extras, out: outURL, junitPath: options.junitPath, log: log)
    }

    private static func merge(
        _ plan: Plan, ledger: [LedgerRow]?, extras: Extras, out: URL, junitPath: String?,
        log: @escaping @Sendable (String) -> Void
    ) -> Result {
        let manifests = plan.shards.map(\.manifest)
        var profile = manifests[0].profile
        profile.expect.thresholds = (extras.noThresholds ? [] : profile.expect.thresholds) + extras.thresholds
        let start = manifests.map(\.startEpoch).min() ?? manifests[0].startEpoch
        let shifts = manifests.map { $0.startEpoch - start }
        // Verdicts over the union of records, streamed in time order; sorted in memory if a
        // shard's rows are further out of order than the reorder window.
        // The merged attempts.csv and calls.csv are written by the same pass, in its order.
        let evaluated: Evaluated
        do {
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            evaluated = try evaluate(
                plan, shifts: shifts, attribution: manifests.flatMap(\.attribution),
                context: verdictContext(
                    manifests, profile: profile, ledger: ledger, ledgerMayLag: extras.ledgerMayLag, start: start),
                recordsDirectory: out)
        } catch {
            return Result(exitCode: 2, directory: nil, summary: nil, error: "\(error)").logged(log)
        }
        var fileProblems = evaluated.fileProblems
        if let ledger {
            do {
                try MergedLedgerFile.write(ledger, to: out)
            } catch {
                fileProblems.append("\(out.appendingPathComponent(MergedLedgerFile.name).path): \(error)")
            }
        }
        if !evaluated.streamed, let reason = evaluated.fallbackReason { log("note: \(reason)") }
        let summary = mergedSummary(
            plan, profile: profile, start: start, shifts: shifts, evaluated: evaluated, ledger: ledger, extras: extras)
        var assembly = ReportAssembly(profile: profile, verdicts: evaluated.report, log: log)
        assembly.attempts = evaluated.attempts
        assembly.chartsLeftOut = evaluated.attempts == nil
        assembly.fromShards = true
        assembly.notes =
            (extras.invalidReason.map { [$0] } ?? [])
            + notes(plan, shifts: shifts, evaluated: evaluated, given: extras.notes, summary: summary)
        assembly.recordNotes = evaluated.notes
        assembly.aborts = manifests.filter { $0.stopReason == .thresholdAborted }.map {
            "shard \($0.shard) was aborted by an abortOnFail threshold"
        }
        assembly.ioProblems =
            manifests.flatMap { m in m.ioProblems.map { "shard \(m.shard): \($0)" } } + fileProblems
        assembly.invalidReason = extras.invalidReason
        assembly.signal = extras.signal
        assembly.junitPath = junitPath
        return assembly.finish(summary, in: out)
    }

    /// The verdicts' context for the shards' records. The run's own horizon: the streamed passes
    /// drop what no later row can need, as in the live run, so a merge's memory follows the rate
    /// and the windows, not the run's length.
    private static func verdictContext(
        _ manifests: [ShardManifest], profile: SoakProfile, ledger: [LedgerRow]?, ledgerMayLag: Bool, start: Double
    ) -> VerdictContext {
        var deviceIds: [String: String] = [:]
        var launchDeviceIds: [DeviceLaunch: String] = [:]
        for manifest in manifests {
            deviceIds.merge(manifest.deviceIds) { first, _ in first }
            launchDeviceIds.merge(manifest.launchDeviceIds) { first, _ in first }
        }
        var context = VerdictContext(
            configuration: profile.expect, maxRetries: profile.sdk.maxRetries, ledger: ledger, runStartEpoch: start,
            deviceIds: deviceIds, launchDeviceIds: launchDeviceIds, horizonSeconds: SoakRun.horizon(for: profile))
        context.ledgerMayLag = ledgerMayLag
        return context
    }

    /// The merged run's measured summary: the shards' tallies added on the earliest start's
    /// clock, their RSS samples moved onto it, the metadata of the whole.
    private static func mergedSummary(
        _ plan: Plan, profile: SoakProfile, start: Double, shifts: [Double], evaluated: Evaluated,
        ledger: [LedgerRow]?, extras: Extras
    ) -> SoakSummary {
        let manifests = plan.shards.map(\.manifest)
        let first = manifests[0]
        var tally = RecorderTally(interval: first.tally.interval, lateThreshold: first.tally.lateThreshold)
        for (manifest, shift) in zip(manifests, shifts) {
            tally.add(manifest.tally, slotShift: Int((shift / tally.interval).rounded()))
        }
        let activeSeconds = zip(manifests, shifts).map { $0.activeSeconds + $1 }.max() ?? 0
        var sharding = SoakSummary.Sharding(count: plan.count)
        sharding.merged = manifests.map(\.shard.index)
        sharding.missing = plan.missing
        sharding.startAt = first.startAt
        sharding.streamed = evaluated.streamed
        sharding.reorderWindowSeconds = evaluated.window
        var run = SoakSummary.RunMetadata(
            runId: Array(Set(manifests.map(\.runId))).sorted().joined(separator: "+"), profile: profile.name,
            profilePath: nil, soakVersion: OptoLinkSoak.version, startedAt: MeasuredSummary.timestamp(start),
            startEpoch: start, durationSeconds: activeSeconds,
            interrupted: manifests.contains(where: \.interrupted) || extras.signal != nil,
            stopReason: extras.signal ?? mergedStopReason(manifests.map(\.stopReason)),
            backend: extras.backendKind ?? first.backend,
            baseURL: first.baseURL, loadModel: profile.load.model.rawValue, devices: profile.devices.count,
            seed: profile.seed, transport: first.transport)
        run.profileHash = first.planHash
        run.shards = sharding
        let rss = zip(manifests, shifts).flatMap { manifest, shift in
            manifest.rss.map { SoakSummary.RSSSample(t: $0.t + shift, bytes: $0.bytes) }
        }.sorted { $0.t < $1.t }
        return MeasuredSummary.build(
            run: run, tally: tally, outage: OutagePlan.of(profile), loadModel: profile.load.model,
            scheduled: manifests.reduce(0) { $0 + $1.scheduled }, rss: rss, counters: extras.counters,
            ledgerEntries: ledger?.count)
    }

    /// The merged report's own notes: what was merged, what is missing, and what about the
    /// shards makes the whole less exact (`given`: the caller's, after the first two).
    private static func notes(
        _ plan: Plan, shifts: [Double], evaluated: Evaluated, given: [String], summary: SoakSummary
    ) -> [String] {
        let manifests = plan.shards.map(\.manifest)
        var notes: [String] = []
        if !plan.missing.isEmpty {
            notes.append(
                "PARTIAL: shard\(plan.missing.count == 1 ? "" : "s") "
                    + plan.missing.map { "\($0)/\(plan.count)" }.joined(separator: ", ")
                    + " missing (--allow-partial): counts, verdicts and thresholds cover only the merged shards")
        }
        notes.append(
            "merged \(manifests.count) of \(plan.count) shards (\(manifests.map(\.shard.description).joined(separator: ", ")))"
                + (evaluated.streamed ? "" : "; records sorted in memory: \(evaluated.fallbackReason ?? "")"))
        notes += given
        let runIds = Array(Set(manifests.map(\.runId))).sorted()
        if runIds.count > 1 {
            notes.append(
                "the shards carry different run ids (\(runIds.joined(separator: ", "))); pass the same --run-id")
        }
        if Set(manifests.map(\.startEpoch)).count > 1 {
            let spread = (shifts.max() ?? 0) - (shifts.min() ?? 0)
            notes.append(
                "the shards' second 0 differ by up to \(formatSeconds(spread)) s (no shared --start-at): their times "
                    + "were moved onto the earliest start, and limit windows across shards are only as exact as "
                    + "the machines' clocks")
        }
        for manifest in manifests
        where manifest.interrupted || [.deadline, .misconfigured].contains(manifest.stopReason) {
            notes.append(
                "shard \(manifest.shard) stopped early (\(manifest.stopReason.rawValue)): the merged report covers "
                    + "the part of its plan it ran")
        }
        for manifest in manifests {
            for problem in ShardHealth.problems(manifest.health, shard: manifest.shard) {
                notes.append("\(problem) (its health check failed; merged with --allow-partial)")
            }
        }
        for manifest in manifests where manifest.lateSeconds > summary.journeys.lateThresholdSeconds {
            notes.append(
                "shard \(manifest.shard) started \(formatSeconds(manifest.lateSeconds)) s after --start-at "
                    + "(its journeys planned before then count as late starts)")
        }
        return notes
    }

    /// The stop reason of the whole: a signal, cut or abort in any shard outranks a natural end.
    static func mergedStopReason(_ reasons: [StopReason]) -> StopReason {
        let rank: [StopReason] = [
            .misconfigured, .thresholdAborted, .terminated, .interrupted, .deadline, .duration, .iterations, .completed,
        ]
        return rank.first(where: reasons.contains) ?? reasons.first ?? .completed
    }
}

extension SoakRunResult {
    fileprivate func logged(_ log: (String) -> Void) -> Self {
        if let error { log("error: \(error)") }
        return self
    }
}
