import Foundation
import OptoLink
import Synchronization
import SoakRecords

/// What the run measured beside its records, handed to the report.
struct RunOutcome {
    var runId: String
    /// The wall-clock time of the run's second 0, seconds since 1970.
    var startEpoch: Double
    var stopReason: StopReason
    /// Seconds from the run's second 0 to the end of its last call.
    var activeSeconds: Double
    var rss: [SoakSummary.RSSSample]
    /// Journeys the plan scheduled (started or dropped).
    var scheduled: Int
    /// Why the monitor stopped the run (misconfigured, or an abortOnFail threshold), else `nil`.
    var monitorMessage: String?
    var transport: SoakTransportKind
    /// How late this process reached `--start-at`, seconds.
    var lateSeconds: Double
    var ledger: LedgerSource
    /// The source-address check's lines.
    var sourceNotes: [String]
    /// The process's CPU while the driver ran.
    var generator: SoakSummary.GeneratorUse
    /// How busy the machine was while the driver ran.
    var machine: SoakSummary.MachineLoad
}

/// The run itself: prepare (``SoakRun`` + Setup), drive the devices alongside the progress
/// line, the RSS sampler, the monitor and the CSV flushes, then write the report.
extension SoakRun {
    func run(_ profile: SoakProfile, backend: any SoakBackend, directory: URL) async -> SoakRunResult {
        let session = Self.session(for: profile)
        defer { session.finishTasksAndInvalidate() }
        do {
            // The transport note first: a user who points an https:// URL at a broken endpoint learns
            // which stack the run takes before the reachability check reports the endpoint.
            let (transportKind, transportNote) = SoakTransportKind.resolve(options.transport, baseURL: backend.baseURL)
            if let transportNote { log(transportNote) }
            if transportKind == .native, !options.tls.verifiesPeer, backend.baseURL.scheme?.lowercased() == "https" {
                log("warning: --insecure: the backend's TLS certificate and name are NOT verified in this run")
            }
            let linkIds = try await resolveLinks(profile, backend: backend, transport: transportKind, session: session)
            let (devices, sourceNotes) = try await placeDevices(profile, backend: backend, transport: transportKind)
            let (timeline, lateSeconds) = try await startTimeline()
            let (recorder, ledger) = try makeRecorder(
                profile, backend: backend, directory: directory, timeline: timeline)
            // Outage windows count from the run's start, not from the emulator's.
            backend.runStarted(atEpoch: timeline.originEpoch)
            let runId = options.runId ?? String(UInt64.random(in: 0..<(1 << 40)), radix: 36)
            let (nativeClient, transport) = try makeTransport(transportKind, session: session)
            var runner = JourneyRunner(
                recorder: recorder, timeline: timeline, transport: wrapTransport(transport), session: session,
                clock: clock, control: control, baseURL: backend.baseURL, sdk: profile.sdk, runId: runId,
                linkIds: linkIds,
                retryPolicy: retryPolicy)
            runner.extraHeaders = options.headers
            runner.forwardsSourceAddress = options.forwardedFor
            if let nativeClient { runner.executors = SoakClientLoops.executors(of: nativeClient, for: devices) }
            let driver = SoakDriver(
                profile: profile, devices: devices, runner: runner, control: control, shard: options.shard ?? .whole)
            let metricsEndpoint = try startMetrics(profile, recorder: recorder, driver: driver, runId: runId)
            log(
                "optolink-soak \(OptoLinkSoak.version): \(profile.name) · \(devices.count) devices · \(profile.load.model.rawValue) model · \(backend.kind) \(backend.baseURL.absoluteString) → \(directory.path)"
            )
            do {
                try recorder.startWriter()
            } catch {
                log("note: the recorder's writer thread did not start (\(error)); requests record inline")
            }
            let monitor = RunMonitor(thresholds: profile.expect.thresholds)
            let rss = RSSSampler(
                timeline: timeline, every: Swift.max(1, profile.load.effectiveDuration / 300),
                emulator: backend.retained)
            let machineBefore = MachineLoadReader().sample()
            let cpuBefore = processCPUSeconds()
            let driveStart = timeline.now()
            let stopReason = await drive(driver, recorder: recorder, timeline: timeline, monitor: monitor, rss: rss)
            let activeSeconds = timeline.now()
            let generator = SoakSummary.GeneratorUse(
                cpuSeconds: processCPUSeconds() - cpuBefore, wallSeconds: activeSeconds - driveStart,
                cores: ProcessInfo.processInfo.activeProcessorCount, withEmbeddedBackend: backend.kind == "embedded")
            let machine = MachineLoadReader.load(from: machineBefore, to: MachineLoadReader().sample())
            await nativeClient?.shutdown()
            recorder.finish()
            let outcome = RunOutcome(
                runId: runId, startEpoch: timeline.originEpoch, stopReason: monitor.stopReason ?? stopReason,
                activeSeconds: activeSeconds, rss: rss.samples, scheduled: driver.scheduled.current,
                monitorMessage: monitor.message,
                transport: transportKind, lateSeconds: lateSeconds, ledger: ledger, sourceNotes: sourceNotes,
                generator: generator, machine: machine)
            let result = await finishReport(
                outcome, profile: profile, backend: backend, recorder: recorder, directory: directory)
            // The endpoint serves until the report is written, so a last scrape sees the final counts.
            await metricsEndpoint?.stop()
            return result
        } catch let failure as RunSetupFailure {
            return fail(failure.message)
        } catch {
            return fail("\(error)")
        }
    }

    /// Runs the driver to its end beside the progress line, the RSS sampler, the monitor (which
    /// stops a misconfigured run early, and one whose abortOnFail threshold failed) and the CSV
    /// flushes; returns why the driver stopped.
    private func drive(
        _ driver: SoakDriver, recorder: SoakRecorder, timeline: RunTimeline, monitor: RunMonitor, rss: RSSSampler
    ) async -> StopReason {
        let clock = self.clock
        let control = self.control
        let processCPUSeconds = self.processCPUSeconds
        let progress = options.progress ? self.progress : nil
        return await withTaskGroup(of: StopReason?.self) { group in
            group.addTask { await driver.run() }
            if let progress {
                let lastBox = LastSample(cpu: processCPUSeconds())
                let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
                group.addTask {
                    await progress.run(clock: clock) {
                        let now = timeline.now()
                        let c = recorder.progressCounters(at: now)
                        let sample = LastSample.Sample(
                            requests: c.requests, lateStarts: recorder.progressLateStarts(),
                            cpu: processCPUSeconds(), time: now)
                        let last = lastBox.swap(sample)
                        let seconds = now - last.time
                        func perSecond(_ delta: Double) -> Double { seconds > 0 ? delta / seconds : 0 }
                        var snapshot = ProgressSnapshot(
                            elapsed: now, scheduled: driver.scheduled.current, done: c.done,
                            inFlight: driver.inFlight.current, requests: c.requests,
                            requestRate: perSecond(Double(c.requests - last.requests)),
                            status429: c.status429, errors: c.errors, p99: c.p99,
                            waitingOnRetryAfter: c.waitingOnRetryAfter)
                        snapshot.lateStartsPerSecond = perSecond(Double(sample.lateStarts - last.lateStarts))
                        snapshot.cpuShare = perSecond(sample.cpu - last.cpu) / cores
                        return snapshot
                    }
                    return nil
                }
            }
            group.addTask {
                await rss.run(clock: clock)
                return nil
            }
            group.addTask {
                while !Task.isCancelled && !control.isStopped {
                    try? await clock.sleep(for: .milliseconds(250), tolerance: .milliseconds(50))
                    if let reason = monitor.check(now: timeline.now(), recorder: recorder) {
                        control.stop(reason)
                        return nil
                    }
                }
                return nil
            }
            // Streamed rows reach the disk at least once a second, so even SIGKILL keeps what was measured.
            group.addTask {
                while !Task.isCancelled {
                    try? await clock.sleep(for: .seconds(1), tolerance: .milliseconds(100))
                    recorder.attemptsCSV.flush()
                    recorder.callsCSV.flush()
                }
                return nil
            }
            var reason = StopReason.completed
            while let value = await group.next() {
                if let value {
                    reason = value
                    group.cancelAll()
                }
            }
            return reason
        }
    }
}

/// The previous progress sample (for the rates since it).
private final class LastSample: Sendable {
    struct Sample {
        var requests: Int
        var lateStarts: Int
        /// The process's CPU seconds.
        var cpu: Double
        /// Run time, seconds.
        var time: Double
    }

    private let value: Mutex<Sample>

    /// A first sample at run time 0 with the process's CPU seconds so far.
    init(cpu: Double) { value = Mutex(Sample(requests: 0, lateStarts: 0, cpu: cpu, time: 0)) }

    /// Stores the new sample and returns the previous one.
    func swap(_ sample: Sample) -> Sample {
        value.withLock { v in
            defer { v = sample }
            return v
        }
    }
}
