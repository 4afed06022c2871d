import Foundation
import SoakRecords
import SoakVerdicts

/// The run's report: its ledger settled, its measured summary, what read back from its files,
/// handed to the ``ReportAssembly`` that `merge` uses too.
extension SoakRun {
    func finishReport(
        _ outcome: RunOutcome, profile: SoakProfile, backend: any SoakBackend, recorder: SoakRecorder, directory: URL
    ) async -> SoakRunResult {
        // A signal stopped the run even when the grace deadline then cut its in-flight work
        // (stopReason `deadline`): the exit code still says which signal.
        let signal = control.stopReason.flatMap { $0.isSignal ? $0 : nil }
        let (ledgerEntries, ledgerError, ledgerNote) = await settleLedger(
            outcome.ledger, backend: backend, recorder: recorder)
        var verdicts = recorder.finishVerdicts()
        if ledgerEntries == nil {
            verdicts = VerdictsReport(
                results: verdicts.results + [
                    ledgerError.map { ReconciliationVerdict.notAvailable(because: "--ledger: \($0)") }
                        ?? ReconciliationVerdict.notAvailable
                ],
                ignoredAttempts: verdicts.ignoredAttempts)
        }
        let profileHash = ProfileFingerprint.of(profile)
        var summary = MeasuredSummary.build(
            run: metadata(outcome, profile: profile, backend: backend, recorder: recorder, signal: signal),
            tally: recorder.tally(), outage: recorder.outage, loadModel: profile.load.model,
            scheduled: outcome.scheduled, rss: outcome.rss, counters: await backend.counters(),
            ledgerEntries: ledgerEntries)
        summary.run.profileHash = profileHash
        summary.journeys.lateStartLimit = profile.expect.effectiveLateStartLimit
        Self.placeRSS(outcome.rss, in: &summary.timeline, interval: recorder.interval)
        summary.rssScope =
            backend.kind == "embedded"
            ? "one process: the driver and the embedded emulator; rss[].emulator counts what the emulator holds"
            : "the driver only (the backend is remote)"
        let readBack = Self.readBack(recorder: recorder, directory: directory)
        let misconfigured = outcome.stopReason == .misconfigured
        var assembly = ReportAssembly(profile: profile, verdicts: verdicts, log: log)
        assembly.attempts = readBack.attempts
        assembly.chartsLeftOut = readBack.attempts == nil && readBack.attemptsSize != nil
        assembly.notes =
            (misconfigured ? outcome.monitorMessage.map { [$0] } ?? [] : []) + outcome.sourceNotes
            + (ledgerError.map { ["--ledger could not be read: \($0)"] } ?? []) + (ledgerNote.map { [$0] } ?? [])
        assembly.recordNotes = recorder.summaryNotes()
        if outcome.stopReason == .thresholdAborted, let message = outcome.monitorMessage {
            assembly.aborts = ["the run was aborted: \(message)"]
        }
        assembly.ioProblems = readBack.ioProblems
        // Why the run cannot be judged, most fundamental first (I/O problems come after these).
        if misconfigured {
            assembly.invalidReason =
                outcome.monitorMessage ?? "stopped early: every response was refused (401/403/404)"
        } else if let ledgerError {
            // The run asked to be reconciled with a ledger and could not be: a CI gate must not pass it.
            assembly.invalidReason =
                "the --ledger file could not be read, so the run is not reconciled: \(ledgerError)"
        }
        assembly.signal = signal
        if let shard = options.shard {
            let health = ShardHealth.rows(summary, cpuShare: Self.cpuShare(outcome))
            assembly.shardHealth = health
            assembly.notes.append(ShardHealth.note(shard))
            var manifest = shardManifest(
                shard, outcome: outcome, profile: profile, profileHash: profileHash, backend: backend,
                recorder: recorder, ioProblems: readBack.ioProblems)
            manifest.health = health
            assembly.shardManifest = manifest
        }
        assembly.junitPath = options.junitPath
        assembly.baselineDirectory = options.baselineDirectory
        return assembly.finish(summary, in: directory)
    }

    /// The ledger reaches the verdicts live (embedded emulator) or now, streamed from the
    /// backend: how many entries it had, or why it could not be read. A `--ledger` file is read
    /// once it has caught up with the run's last successful write (``LedgerCatchUp``, at most
    /// `--ledger-wait` seconds on the run's clock); `note` says how far it got when it did not.
    private func settleLedger(
        _ source: LedgerSource, backend: any SoakBackend, recorder: SoakRecorder
    ) async -> (entries: Int?, error: String?, note: String?) {
        switch source {
        case .live(let relay):
            return (relay.count, nil, nil)
        case .atEnd:
            if let url = options.ledgerPath.flatMap(AdminLedgerReader.url) {
                // A remote emulator's ledger route, asked for the entries up to now: the run's end.
                do {
                    let until = recorder.timeline.originEpoch + recorder.timeline.now()
                    return (
                        try await AdminLedgerReader.read(
                            url, until: until, adminToken: options.adminToken, tls: options.tls
                        ) { recorder.ledgerRecorded($0) }, nil, nil
                    )
                } catch {
                    return (nil, "\(error)", nil)
                }
            }
            var note: String?
            if let path = options.ledgerPath {
                let waited = await LedgerCatchUp.wait(
                    for: URL(fileURLWithPath: path), through: recorder.lastSuccessfulWriteEpoch,
                    limit: options.ledgerWaitSeconds, clock: clock)
                note = waited.note
                if let note { log("note: \(note)") }
            }
            do {
                return (try await backend.readLedger { recorder.ledgerRecorded($0) }, nil, note)
            } catch {
                return (nil, "\(error)", note)
            }
        }
    }

    private func metadata(
        _ outcome: RunOutcome, profile: SoakProfile, backend: any SoakBackend, recorder: SoakRecorder,
        signal: StopReason?
    ) -> SoakSummary.RunMetadata {
        var run = SoakSummary.RunMetadata(
            runId: outcome.runId, profile: profile.name, profilePath: options.profilePath,
            soakVersion: OptoLinkSoak.version, startedAt: MeasuredSummary.timestamp(outcome.startEpoch),
            startEpoch: outcome.startEpoch, durationSeconds: outcome.activeSeconds,
            interrupted: signal != nil, stopReason: outcome.stopReason, backend: backend.kind,
            baseURL: backend.baseURL.absoluteString, loadModel: profile.load.model.rawValue,
            devices: profile.devices.count, seed: profile.seed, transport: outcome.transport.rawValue,
            tls: outcome.transport == .native ? Self.tlsNote(options.tls, baseURL: backend.baseURL) : nil)
        run.recording = recorder.recordingLag
        run.generator = outcome.generator
        run.machine = outcome.machine
        if let shard = options.shard {
            var sharding = SoakSummary.Sharding(count: shard.count, index: shard.index)
            sharding.startAt = options.startAt
            sharding.lateSeconds = outcome.lateSeconds
            let slice = ShardHealth.slice(shard, profile: profile, journeys: outcome.scheduled)
            sharding.slice = slice
            run.shards = sharding
            // The devices this shard drove; `shards.slice.planDevices` has the whole plan's.
            run.devices = slice.devices
        }
        return run
    }

    /// The process's CPU over the run as a share of the machine's cores, or `nil` before second 0.
    private static func cpuShare(_ outcome: RunOutcome) -> Double? {
        outcome.generator.wallSeconds > 0 ? outcome.generator.share : nil
    }

    /// What the report files read back: the attempts for the HTML report's charts (only while
    /// `attempts.csv` is small enough: a long run's report keeps its memory flat and goes without
    /// them; the verdicts ran live), its size, and every row that did not reach the disk or does
    /// not read back whole (the report is only worth its verdicts without them).
    private static func readBack(
        recorder: SoakRecorder, directory: URL
    ) -> (attempts: [AttemptRecord]?, attemptsSize: Int?, ioProblems: [String]) {
        let attemptsURL = directory.appendingPathComponent("attempts.csv")
        let callsURL = directory.appendingPathComponent("calls.csv")
        var ioProblems: [String] = []
        for writer in [recorder.attemptsCSV, recorder.callsCSV] {
            if let failure = writer.failure { ioProblems.append("\(writer.url.path): \(failure)") }
        }
        var attempts: [AttemptRecord]? = nil
        let attemptsSize = (try? FileManager.default.attributesOfItem(atPath: attemptsURL.path)[.size] as? Int) ?? nil
        if let attemptsSize, attemptsSize <= chartAttemptsLimitBytes {
            do { attempts = try ReportCSVReader.attempts(attemptsURL) } catch { ioProblems.append("\(error)") }
        }
        for url in [attemptsURL, callsURL] where !FileManager.default.fileExists(atPath: url.path) {
            ioProblems.append("\(url.path): missing")
        }
        return (attempts, attemptsSize, ioProblems)
    }

    /// `shard.json`: what `merge` needs of this shard beside its CSVs.
    private func shardManifest(
        _ shard: SoakShard, outcome: RunOutcome, profile: SoakProfile, profileHash: String,
        backend: any SoakBackend, recorder: SoakRecorder, ioProblems: [String]
    ) -> ShardManifest {
        ShardManifest(
            runId: outcome.runId, shard: shard, planHash: profileHash, startEpoch: outcome.startEpoch,
            startAt: options.startAt, lateSeconds: outcome.lateSeconds, activeSeconds: outcome.activeSeconds,
            scheduled: outcome.scheduled, stopReason: outcome.stopReason,
            interrupted: control.stopReason?.isSignal == true,
            backend: backend.kind, baseURL: backend.baseURL.absoluteString, transport: outcome.transport.rawValue,
            profile: profile.redactingSecrets(), tally: recorder.tally(), attribution: recorder.attribution,
            deviceIds: recorder.deviceIds, launchDeviceIds: recorder.launchDeviceIds, rss: outcome.rss,
            ioProblems: ioProblems, lastWriteEpoch: recorder.lastSuccessfulWriteEpoch)
    }
}
