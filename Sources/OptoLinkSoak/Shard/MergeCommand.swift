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
    /// What a merge produced.
    package struct Result: Sendable {
        package var exitCode: Int32
        package var directory: URL?
        package var summary: SoakSummary?
        /// Why the merge could not be done (exit code 2), else `nil`.
        package var error: String?
    }

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
        package init(ledger: [LedgerRow]? = nil, counters: JSONValue? = nil, signal: StopReason? = nil) {
            self.ledger = ledger
            self.counters = counters
            self.signal = signal
        }
    }

    /// How far back in run time each shard's reorder buffer holds rows at first, in seconds;
    /// a shard whose rows lag further (a session call closed at its launch's end) makes the
    /// merge read again with a window twice that lag, up to ``maxReorderWindowSeconds``.
    static let reorderWindowSeconds = 10.0
    static let maxReorderWindowSeconds = 900.0
    /// The shards' `attempts.csv` bytes up to which the merged `report.html` gets its
    /// per-attempt charts (the rows are then kept in memory), as `run` does for one file.
    static var chartAttemptsLimitBytes: Int { SoakRun.chartAttemptsLimitBytes }

    /// How many attempts to keep for the charts: all when the shards' files are small enough, else none.
    static func chartAttemptLimit(_ plan: Plan) -> Int {
        let bytes = plan.shards.reduce(0) { total, shard in
            let path = shard.url.appendingPathComponent("attempts.csv").path
            return total + ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        }
        return bytes <= chartAttemptsLimitBytes ? Int.max : 0
    }

    /// Merges and writes the report; never throws (problems become exit code 2).
    package static func run(
        _ options: MergeOptions, extras: Extras = Extras(), log: @Sendable (String) -> Void
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
        if let problem = PathProblem.creatingDirectory(out) { return fail("--out \(problem)") }
        if !options.force, let file = PathProblem.existingReport(in: out) {
            return fail(
                "--out \(out): already holds a report (\(file)); choose a new directory, or pass --force to "
                    + "overwrite it")
        }
        var shards: [(url: URL, manifest: ShardManifest)] = []
        var skipped: [String] = []
        for path in options.directories {
            let url = URL(fileURLWithPath: path, isDirectory: true)
            var isDirectory: ObjCBool = false
            let manifestPath = url.appendingPathComponent(ShardManifest.fileName).path
            if options.allowPartial, FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
                isDirectory.boolValue, !FileManager.default.fileExists(atPath: manifestPath)
            {
                // A shard that started but never finished its report (killed, out of memory).
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
        var ledger = extras.ledger
        if let path = options.ledgerPath {
            do {
                ledger = try RemoteBackend.readLedger(URL(fileURLWithPath: path))
            } catch {
                return fail("\(error)")
            }
        }
        let outURL = URL(fileURLWithPath: out, isDirectory: true)
        var extras = extras
        extras.thresholds = options.extraThresholds.map(ThresholdSpec.init)
        extras.noThresholds = options.noThresholds
        extras.notes += skipped.map {
            "\($0): no \(ShardManifest.fileName) (the shard did not finish its report); left out"
        }
        return merge(plan, ledger: ledger, extras: extras, out: outURL, junitPath: options.junitPath, log: log)
    }

    /// The checked set of shards: one plan, each shard once, sorted by index.
    struct Plan {
        var shards: [(url: URL, manifest: ShardManifest)]
        var count: Int
        var missing: [Int]

        /// - Throws: ``SoakReportError`` naming the directories: different plans, different
        ///   shard counts, a shard given twice, or missing shards without `allowPartial`.
        static func check(_ given: [(url: URL, manifest: ShardManifest)], allowPartial: Bool) throws -> Plan {
            guard let first = given.first else { throw SoakReportError(message: "merge: no shard given") }
            let hashes = Set(given.map(\.manifest.planHash))
            if hashes.count > 1 {
                let listing = given.map { "\($0.url.path): \($0.manifest.planHash.prefix(12))" }
                throw SoakReportError(
                    message: "merge: the shards are of different plans (profile hash differs; same profile, flags "
                        + "and seed are needed): " + listing.joined(separator: ", "))
            }
            let counts = Set(given.map(\.manifest.shard.count))
            if counts.count > 1 {
                let listing = given.map { "\($0.url.path): \($0.manifest.shard)" }
                throw SoakReportError(
                    message: "merge: the shards split the plan differently: " + listing.joined(separator: ", "))
            }
            var seen: [Int: URL] = [:]
            for shard in given {
                if let other = seen[shard.manifest.shard.index] {
                    throw SoakReportError(
                        message: "merge: shard \(shard.manifest.shard) is given twice (\(other.path) and "
                            + "\(shard.url.path)); each shard must be merged once")
                }
                seen[shard.manifest.shard.index] = shard.url
            }
            let count = first.manifest.shard.count
            // Shards of one run start together (one --start-at, or within seconds); starts further
            // apart than the longest shard plus an hour are another run of the same plan.
            let starts = given.map(\.manifest.startEpoch)
            let longest = given.map(\.manifest.activeSeconds).max() ?? 0
            if let earliest = starts.min(), let latest = starts.max(), latest - earliest > longest + 3_600 {
                throw SoakReportError(
                    message: "merge: the shards started \(formatSeconds(latest - earliest)) s apart, longer than a "
                        + "shard ran: they are not one run. Run all shards with one --start-at")
            }
            let missing = (0..<count).filter { seen[$0] == nil }
            if !missing.isEmpty && !allowPartial {
                throw SoakReportError(
                    message: "merge: missing shard\(missing.count == 1 ? "" : "s") "
                        + missing.map { "\($0)/\(count)" }.joined(separator: ", ")
                        + " of the plan; the merged report would judge only part of the load. Pass --allow-partial "
                        + "to merge what there is (the report then names the missing shards)")
            }
            return Plan(
                shards: given.sorted { $0.manifest.shard.index < $1.manifest.shard.index }, count: count,
                missing: missing)
        }
    }

    private static func merge(
        _ plan: Plan, ledger: [LedgerRow]?, extras: Extras, out: URL, junitPath: String?,
        log: @Sendable (String) -> Void
    ) -> Result {
        let manifests = plan.shards.map(\.manifest)
        let first = manifests[0]
        var profile = first.profile
        profile.expect.thresholds = (extras.noThresholds ? [] : profile.expect.thresholds) + extras.thresholds
        let start = manifests.map(\.startEpoch).min() ?? first.startEpoch
        let shifts = manifests.map { $0.startEpoch - start }
        var tally = RecorderTally(interval: first.tally.interval, lateThreshold: first.tally.lateThreshold)
        for (manifest, shift) in zip(manifests, shifts) {
            tally.add(manifest.tally, slotShift: Int((shift / tally.interval).rounded()))
        }
        let activeSeconds = zip(manifests, shifts).map { $0.activeSeconds + $1 }.max() ?? 0
        var notes: [String] = extras.notes

        // Verdicts over the union of records, streamed in time order; sorted in memory if a
        // shard's rows are further out of order than the reorder window.
        var deviceIds: [String: String] = [:]
        var launchDeviceIds: [DeviceLaunch: String] = [:]
        for manifest in manifests {
            deviceIds.merge(manifest.deviceIds) { first, _ in first }
            launchDeviceIds.merge(manifest.launchDeviceIds) { first, _ in first }
        }
        let attribution = manifests.flatMap(\.attribution)
        // The run's own horizon: the streamed passes drop what no later row can need, as in the
        // live run, so a merge's memory follows the rate and the windows, not the run's length.
        let context = VerdictContext(
            configuration: profile.expect, maxRetries: profile.sdk.maxRetries, ledger: ledger, runStartEpoch: start,
            deviceIds: deviceIds, launchDeviceIds: launchDeviceIds, horizonSeconds: SoakRun.horizon(for: profile))
        let evaluated: Evaluated
        do {
            evaluated = try evaluate(plan, shifts: shifts, attribution: attribution, context: context)
        } catch {
            return Result(exitCode: 2, directory: nil, summary: nil, error: "\(error)").logged(log)
        }
        if !evaluated.streamed, let reason = evaluated.fallbackReason { log("note: \(reason)") }

        let parts = tally.summaryParts(activeSeconds: activeSeconds, outage: OutagePlan.of(profile))
        var journeys = parts.journeys
        journeys.scheduled = manifests.reduce(0) { $0 + $1.scheduled }
        if profile.load.model == .closed { journeys.dropped = nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let runIds = Array(Set(manifests.map(\.runId))).sorted()
        let interrupted = manifests.contains(where: \.interrupted) || extras.signal != nil
        var sharding = SoakSummary.Sharding(count: plan.count)
        sharding.merged = manifests.map(\.shard.index)
        sharding.missing = plan.missing
        sharding.startAt = first.startAt
        sharding.streamed = evaluated.streamed
        sharding.reorderWindowSeconds = evaluated.window
        var run = SoakSummary.RunMetadata(
            runId: runIds.joined(separator: "+"), profile: profile.name, profilePath: nil,
            soakVersion: OptoLinkSoak.version, startedAt: formatter.string(from: Date(timeIntervalSince1970: start)),
            startEpoch: start, durationSeconds: activeSeconds, interrupted: interrupted,
            stopReason: extras.signal ?? mergedStopReason(manifests.map(\.stopReason)),
            backend: extras.backendKind ?? first.backend,
            baseURL: first.baseURL, loadModel: profile.load.model.rawValue, devices: profile.devices.count,
            seed: profile.seed, transport: first.transport)
        run.profileHash = first.planHash
        run.shards = sharding
        var summary = SoakSummary(
            run: run, journeys: journeys, endpoints: parts.endpoints, totals: parts.totals,
            deferredMatch: parts.deferred, clicks: parts.clicks, opens: parts.opens,
            rss: zip(manifests, shifts).flatMap { manifest, shift in
                manifest.rss.map { SoakSummary.RSSSample(t: $0.t + shift, bytes: $0.bytes) }
            }.sorted { $0.t < $1.t },
            server: ledger == nil && extras.counters == nil
                ? nil : .init(counters: extras.counters, ledgerEntries: ledger?.count),
            metrics: [:], verdicts: nil, thresholds: [])
        summary.timeline = tally.intervalSummary(activeSeconds: activeSeconds)
        summary.intervalSeconds = tally.interval
        RunJudgement.judge(&summary, verdicts: evaluated.report, thresholds: profile.expect.thresholds)
        for manifest in manifests where manifest.stopReason == .thresholdAborted {
            summary.thresholds.insert(
                RunJudgement.abortRow("shard \(manifest.shard) was aborted by an abortOnFail threshold"), at: 0)
        }

        notes.insert(
            "merged \(manifests.count) of \(plan.count) shards (\(manifests.map(\.shard.description).joined(separator: ", ")))"
                + (evaluated.streamed ? "" : "; records sorted in memory: \(evaluated.fallbackReason ?? "")"), at: 0)
        if !plan.missing.isEmpty {
            notes.insert(
                "PARTIAL: shard\(plan.missing.count == 1 ? "" : "s") "
                    + plan.missing.map { "\($0)/\(plan.count)" }.joined(separator: ", ")
                    + " missing (--allow-partial): counts, verdicts and thresholds cover only the merged shards",
                at: 0)
        }
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
        for manifest in manifests where manifest.lateSeconds > summary.journeys.lateThresholdSeconds {
            notes.append(
                "shard \(manifest.shard) started \(formatSeconds(manifest.lateSeconds)) s after --start-at "
                    + "(its journeys planned before then count as late starts)")
        }
        if evaluated.attempts == nil {
            notes.append(RunJudgement.chartsLeftOutNote(shards: true))
        }
        let ioProblems = manifests.flatMap { m in m.ioProblems.map { "shard \(m.shard): \($0)" } }
        summary.notes =
            (extras.invalidReason.map { [$0] } ?? []) + notes + evaluated.notes
            + RunJudgement.ioNotes(ioProblems)
        let invalidReason = extras.invalidReason ?? RunJudgement.incompleteReason(ioProblems, shards: true)
        let result = RunJudgement.settle(&summary, invalidReason: invalidReason, signal: extras.signal)

        do {
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            try RunJudgement.writeReport(summary, profile: profile, attempts: evaluated.attempts, to: out)
        } catch {
            log("error: cannot write the merged report to \(out.path): \(error.localizedDescription)")
            return Result(exitCode: 2, directory: out, summary: summary, error: "\(error)")
        }
        log(SummaryText.render(summary))
        if let junitPath, let error = RunJudgement.writeJUnit(JUnitReport.run(summary), to: junitPath, log: log) {
            return Result(exitCode: 2, directory: out, summary: summary, error: error)
        }
        if let invalidReason {
            log("error: \(invalidReason)")
            return Result(exitCode: result.exitCode, directory: out, summary: summary, error: invalidReason)
        }
        let code = result.exitCode
        return Result(exitCode: code, directory: out, summary: summary, error: nil)
    }

    /// The verdicts and what else the one pass over the records gave.
    struct Evaluated {
        var report: VerdictsReport
        var notes: [String]
        var attempts: [AttemptRecord]?
        var streamed: Bool
        var fallbackReason: String?
        /// The reorder window the stream needed, seconds (`nil` when sorted in memory).
        var window: Double?
    }

    /// Runs every verdict over the union of the shards' records: streamed from the CSVs in time
    /// order with a reorder window that widens to fit the rows' lag, or — past `maxWindow` —
    /// read whole and sorted. Every way gives the same records in the same order.
    /// - Throws: ``ReportIOError`` when a shard's CSV cannot be read or has a malformed row.
    static func evaluate(
        _ plan: Plan, shifts: [Double], attribution: [AttributionRecord], context: VerdictContext,
        window: Double = reorderWindowSeconds, maxWindow: Double = maxReorderWindowSeconds
    ) throws -> Evaluated {
        var window = window
        while true {
            do {
                var evaluated = try evaluateStreaming(
                    plan, shifts: shifts, attribution: attribution, context: context, window: window)
                evaluated.window = window
                return evaluated
            } catch let violation as StreamOrderViolation {
                let wider = Swift.max(window * 2, violation.lag * 2)
                guard wider <= maxWindow else {
                    return try evaluateSorted(
                        plan, shifts: shifts, attribution: attribution, context: context,
                        reason: "\(violation.path) row \(violation.row) ends \(formatSeconds(violation.lag)) s before "
                            + "rows written ahead of it, beyond the \(formatSeconds(maxWindow)) s reorder window")
                }
                window = wider
            }
        }
    }

    /// One streamed pass with a reorder window of `window` seconds.
    /// - Throws: ``StreamOrderViolation`` when a row lags further; ``ReportIOError``.
    private static func evaluateStreaming(
        _ plan: Plan, shifts: [Double], attribution: [AttributionRecord], context: VerdictContext, window: Double
    ) throws -> Evaluated {
        var streams: [ShardRecordStream] = []
        for (position, shard) in plan.shards.enumerated() {
            streams.append(
                try ShardRecordStream(directory: shard.url, position: position, shift: shifts[position], window: window)
            )
        }
        let tap = MergedRecordTap(attemptLimit: chartAttemptLimit(plan))
        var report = Verdicts.evaluate(
            stream: MergedRecordSequence(streams: streams, attribution: attribution, tap: tap), context: context)
        if let error = tap.error { throw error }
        report.ignoredAttempts = tap.ignoredAttempts
        return Evaluated(report: report, notes: tap.notes.notes(), attempts: tap.attempts, streamed: true)
    }

    /// Every shard's rows read whole, moved by their shifts and sorted (the stream's order, so
    /// the same verdicts; only the memory differs).
    private static func evaluateSorted(
        _ plan: Plan, shifts: [Double], attribution: [AttributionRecord], context: VerdictContext, reason: String
    ) throws -> Evaluated {
        var attempts: [AttemptRecord] = []
        var calls: [CallRecord] = []
        for (position, shard) in plan.shards.enumerated() {
            let shift = shifts[position]
            attempts += try ReportCSVReader.attempts(shard.url.appendingPathComponent("attempts.csv")).map {
                var a = $0
                a.intendedStart += shift
                a.actualStart += shift
                a.end += shift
                return a
            }
            calls += try ReportCSVReader.calls(shard.url.appendingPathComponent("calls.csv")).map {
                var c = $0
                c.intendedStart += shift
                c.start += shift
                c.end += shift
                return c
            }
        }
        let inputs = VerdictInputs(
            attempts: attempts, calls: calls, ledger: context.ledger, attribution: attribution,
            configuration: context.configuration, maxRetries: context.maxRetries,
            runStartEpoch: context.runStartEpoch, deviceIds: context.deviceIds,
            launchDeviceIds: context.launchDeviceIds)
        return Evaluated(
            report: Verdicts.evaluate(inputs), notes: SummaryNotes.build(attempts: attempts, calls: calls),
            attempts: chartAttemptLimit(plan) > 0 ? attempts : nil, streamed: false,
            fallbackReason: reason)
    }

    /// The stop reason of the whole: a signal, cut or abort in any shard outranks a natural end.
    static func mergedStopReason(_ reasons: [StopReason]) -> StopReason {
        let rank: [StopReason] = [
            .misconfigured, .thresholdAborted, .terminated, .interrupted, .deadline, .duration, .iterations, .completed,
        ]
        return rank.first(where: reasons.contains) ?? reasons.first ?? .completed
    }
}

extension MergeCommand.Result {
    fileprivate func logged(_ log: (String) -> Void) -> Self {
        if let error { log("error: \(error)") }
        return self
    }
}
