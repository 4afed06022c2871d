import Foundation
import OptoLink
import OptoLinkHTTP
import OptoLinkStaging
import Synchronization
import SoakRecords
import SoakVerdicts
import SoakReports

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What a finished `run` produced.
public struct SoakRunResult: Sendable {
    /// 0 = every threshold passed, 1 = a threshold failed, 2 = could not run, 130 = interrupted
    /// (SIGINT), 143 = terminated (SIGTERM); the report is written in both cases.
    public var exitCode: Int32
    /// The report directory (`nil` when the run could not start).
    public var directory: URL?
    /// The report as written to `summary.json`, or `nil` when the run could not start.
    public var summary: SoakSummary?
    /// Why the run could not run (exit code 2), else `nil`.
    public var error: String?
}

/// `optolink-soak run`: loads the profile, starts or reaches the backend, drives the virtual
/// devices, and writes the report (`attempts.csv`, `calls.csv`, `summary.json`, `summary.txt`).
public struct SoakRun: Sendable {
    /// The profile path and the flags that override it.
    public var options: SoakRunOptions
    /// Stops the run early (SIGINT sets it to `interrupted`).
    package var control = RunControl()
    /// Counts SIGINT/SIGTERM and words the message for each (knows the grace period once loaded).
    package let stopRequests = StopRequests()
    /// Builds the backend; default: embedded emulator, or ``RemoteBackend`` with `--base-url`.
    package var makeBackend: @Sendable (SoakProfile, SoakRunOptions) async throws -> any SoakBackend = {
        profile, options in
        if let url = options.baseURL {
            return RemoteBackend(baseURL: url, ledgerFile: options.ledgerPath.map { URL(fileURLWithPath: $0) })
        }
        return try await EmbeddedBackend.start(profile)
    }
    /// Wraps the one shared transport (native or URLSession, per ``SoakRunOptions/transport``); tests may wrap it.
    package var wrapTransport: @Sendable (any OptoLinkTransport) -> any OptoLinkTransport = { $0 }
    /// The retry policy of every SDK instance (tests inject misbehaving ones).
    package var retryPolicy: any OptoLinkRetryPolicy = OptoLinkContractRetryPolicy()
    /// Builds the virtual devices; default: ``VirtualDevice/population(_:seed:)`` (the bench
    /// passes devices it launched beforehand).
    package var makeDevices: @Sendable (SoakProfile) -> [VirtualDevice] = {
        VirtualDevice.population($0.devices, seed: $0.seed)
    }
    package var progress = ProgressReporter()
    /// The run's one clock: the driver, every SDK instance, the recorder's timeline, the
    /// progress line and the CSV flushes read and sleep on it (tests pass a virtual clock).
    package var clock: any Clock<Duration> = ContinuousClock()
    /// Messages for the user (standard error by default).
    package var log: @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }

    /// A run of `options` against the embedded emulator (or `options.baseURL`), on the continuous clock.
    public init(options: SoakRunOptions) { self.options = options }

    /// Runs and returns the exit code and report location; never throws (errors become exit code 2).
    public func execute() async -> SoakRunResult {
        let profile: SoakProfile
        do {
            profile = try SoakProfile.load(contentsOf: URL(fileURLWithPath: options.profilePath))
        } catch {
            return fail("\(error)")
        }
        return await execute(profile: profile)
    }

    /// Runs an already decoded profile (flags in ``options`` still override it).
    public func execute(profile decoded: SoakProfile) async -> SoakRunResult {
        let profile: SoakProfile
        do {
            profile = try options.apply(to: decoded)
        } catch {
            return fail("\(error)")
        }
        if let baseline = options.baselineDirectory {
            // Fail before the run, not after it, when the baseline cannot be read.
            do {
                _ = try SoakReportDirectory.load(URL(fileURLWithPath: baseline, isDirectory: true))
            } catch {
                return fail("--baseline: \(error)")
            }
        }
        if let shard = options.shard {
            if let problem = Self.shardProblem(shard, options: options, profile: profile) { return fail(problem) }
        }
        // The file may be written while the run lasts (it is read at the end), but a path that
        // exists and can never be read as one (a directory, a device) is refused now.
        if let ledger = options.ledgerPath, let kind = PathProblem.kind(at: ledger),
            kind != "a regular file" || !FileManager.default.isReadableFile(atPath: ledger),
            let problem = PathProblem.readingFile(ledger, as: "ledger")
        {
            return fail("--ledger \(problem)")
        }
        for note in profile.deprecations { log("note: \(note)") }
        stopRequests.setGrace(profile.load.grace)
        if options.devices != nil, let iterations = profile.load.iterations {
            log(
                "note: load.iterations = \(iterations) is a total of journeys across all devices; --devices does not raise it"
            )
        }
        let directory = outputDirectory(for: profile)
        if let baseline = options.baselineDirectory, PathProblem.samePlace(baseline, directory.path) {
            return fail(
                "--baseline \(baseline) is the --out directory: the run would overwrite the report it is compared with")
        }
        if let problem = PathProblem.creatingDirectory(directory.path) { return fail("--out \(problem)") }
        if !options.force, let file = PathProblem.existingReport(in: directory.path) {
            return fail(
                "--out \(directory.path): already holds a report (\(file)); choose a new directory, "
                    + "or pass --force to overwrite it")
        }
        let backend: any SoakBackend
        do {
            backend = try await makeBackend(profile, options)
        } catch {
            return fail("\(error)")
        }
        let result = await run(profile, backend: backend, directory: directory)
        await backend.stop()
        return result
    }

    /// `summary.json`'s `run.tls`: how the certificate of an `https://` backend was checked.
    static func tlsNote(_ tls: TLSConfiguration, baseURL: URL) -> String? {
        guard baseURL.scheme?.lowercased() == "https" else { return nil }
        if !tls.verifiesPeer { return "NOT VERIFIED (--insecure)" }
        return tls.additionalTrustFile.map { "verified (+ --cacert \($0))" } ?? "verified"
    }

    private func fail(_ message: String) -> SoakRunResult {
        log("error: \(message)")
        return SoakRunResult(exitCode: 2, directory: nil, summary: nil, error: message)
    }

    private func run(_ profile: SoakProfile, backend: any SoakBackend, directory: URL) async -> SoakRunResult {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 128
        configuration.timeoutIntervalForRequest = Swift.max(1, profile.sdk.timeout.rounded(.up) + 1)
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }

        // The transport note first: a user who points an https:// URL at a broken endpoint learns
        // which stack the run takes before the reachability check reports the endpoint.
        let (transportKind, transportNote) = SoakTransportKind.resolve(options.transport, baseURL: backend.baseURL)
        if let transportNote { log(transportNote) }
        if transportKind == .native, !options.tls.verifiesPeer, backend.baseURL.scheme?.lowercased() == "https" {
            log("warning: --insecure: the backend's TLS certificate and name are NOT verified in this run")
        }
        let linkIds: [String: String]
        do {
            if transportKind == .native, backend.baseURL.scheme?.lowercased() == "https" {
                // The clicked links resolve over the native client too, so --cacert and --insecure hold.
                try await NativeBackendProbe.checkReachable(backend.baseURL, tls: options.tls)
                let client = try HTTPClient(configuration: .init(maxConnectionsPerHost: 1, tls: options.tls))
                do {
                    linkIds = try await BackendProbe.resolveClickedLinks(profile, baseURL: backend.baseURL) {
                        await NativeBackendProbe.get($0, through: client)
                    }
                    await client.shutdown()
                } catch {
                    await client.shutdown()
                    throw error
                }
            } else {
                try await BackendProbe.checkReachable(backend.baseURL, session: session)
                linkIds = try await BackendProbe.resolveClickedLinks(profile, baseURL: backend.baseURL) { request in
                    guard let (data, response) = try? await session.optoLinkData(for: request),
                        let status = (response as? HTTPURLResponse)?.statusCode
                    else { return nil }
                    return (data, status)
                }
            }
        } catch {
            return fail("\(error)")
        }
        var devices = makeDevices(profile)
        var sourceNotes: [String] = []
        if let list = profile.devices.localIPs {
            do {
                let check = try await SourceAddressCheck.run(
                    list: list, devices: devices, shard: options.shard ?? .whole, baseURL: backend.baseURL,
                    transport: transportKind, forwardedFor: options.forwardedFor, tls: options.tls)
                devices = check.plan.bind(devices)
                sourceNotes = check.lines
                for line in check.lines { log(line) }
            } catch {
                return fail("\(error)")
            }
        }

        let clock = self.clock
        let timeline: RunTimeline
        var lateSeconds = 0.0
        if let startAt = options.startAt {
            guard await waitForStart(startAt) else {
                return fail("stopped while waiting for --start-at \(startAt); nothing was run")
            }
            lateSeconds = Swift.max(0, Date().timeIntervalSince1970 - startAt)
            timeline = RunTimeline(clock: clock, epoch: startAt, alreadyElapsed: lateSeconds)
            if lateSeconds > 0.010 {
                log(
                    "note: \(options.shard.map { "shard \($0)" } ?? "the run") started "
                        + "\(formatSeconds(lateSeconds)) s after --start-at; journeys planned before then start "
                        + "late and count as late starts")
            }
        } else {
            timeline = RunTimeline(clock: clock)
        }
        let recorder: SoakRecorder
        // The embedded emulator's ledger goes to a file as it grows and reaches the live verdicts
        // through this relay (set once the recorder exists; entries before that are not this run's).
        let relay = LedgerRelay()
        let ledgerLive: Bool
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            return fail("--out \(directory.path): cannot write the report (\(error.localizedDescription))")
        }
        let ledgerFile =
            options.ledgerFilePath.map { URL(fileURLWithPath: $0) }
            ?? directory.appendingPathComponent("ledger.jsonl")
        do {
            ledgerLive = try backend.followLedger(file: ledgerFile, sink: relay.forward)
        } catch {
            return fail("--ledger-file \(ledgerFile.path): cannot create (\(error.localizedDescription))")
        }
        do {
            let span = profile.load.effectiveDuration + profile.load.grace
            var context = VerdictContext(
                configuration: profile.expect, maxRetries: profile.sdk.maxRetries,
                ledgerStreamed: ledgerLive || backend.mayHaveLedger,
                ledgerLive: ledgerLive, horizonSeconds: Self.horizon(for: profile))
            // The run's own emulator was started for it: nothing used its buckets before.
            context.bucketsStartEmpty = backend.kind == "embedded"
            recorder = try SoakRecorder(
                directory: directory, timeline: timeline, interval: Swift.max(1, (span / 600).rounded(.up)),
                control: control, outage: OutagePlan.of(profile), verdictContext: context,
                keepsMergeInputs: options.shard != nil)
        } catch {
            return fail("--out \(directory.path): cannot write the report (\(error.localizedDescription))")
        }
        relay.connect(recorder)
        // Outage windows count from the run's start, not from the emulator's.
        backend.runStarted(atEpoch: timeline.originEpoch)
        let runId = options.runId ?? String(UInt64.random(in: 0..<(1 << 40)), radix: 36)
        let nativeClient: HTTPClient?
        let transport: any OptoLinkTransport
        switch transportKind {
        case .native:
            do {
                let loops = SoakClientLoops.count(
                    requested: options.clientLoops, pool: options.pool, connections: options.connections, log: log)
                let client = try HTTPClient(
                    configuration: .init(
                        poolMode: options.pool, maxConnectionsPerHost: options.connections, loopCount: loops,
                        responseLimits: SoakClientLoops.responseLimits, tls: options.tls))
                nativeClient = client
                transport = NativeTransport(client: client)
            } catch {
                return fail("--transport native: the HTTP client did not start: \(error)")
            }
        case .urlsession:
            nativeClient = nil
            transport = URLSessionTransport(session: session)
        }
        var runner = JourneyRunner(
            recorder: recorder, transport: wrapTransport(transport), session: session, clock: clock, control: control,
            baseURL: backend.baseURL, sdk: profile.sdk, runId: runId, linkIds: linkIds, retryPolicy: retryPolicy)
        runner.extraHeaders = options.headers
        runner.forwardsSourceAddress = options.forwardedFor
        if let nativeClient { runner.executors = SoakClientLoops.executors(of: nativeClient, for: devices) }
        let driver = SoakDriver(
            profile: profile, devices: devices, runner: runner, control: control, shard: options.shard ?? .whole)
        var metricsEndpoint: MetricsEndpoint? = nil
        if let address = options.metricsListen {
            do {
                metricsEndpoint = try MetricsEndpoint(address: address) { [profileName = profile.name] in
                    var live = recorder.liveMetrics()
                    live.profile = profileName
                    live.runId = runId
                    live.journeysInFlight = driver.inFlight.current
                    live.residentBytes = ProcessMemory.residentBytes()
                    return live
                }
            } catch {
                recorder.finish()
                return fail("--metrics-listen \(address.host):\(address.port): cannot listen (\(error))")
            }
            let host = address.host.contains(":") ? "[\(address.host)]" : address.host
            log("metrics: http://\(host):\(metricsEndpoint?.port ?? 0)/metrics")
        }
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
            timeline: timeline, every: Swift.max(1, profile.load.effectiveDuration / 300), emulator: backend.retained)
        let stopReason: StopReason = await withTaskGroup(of: StopReason?.self) { group in
            group.addTask { await driver.run() }
            if options.progress {
                let progress = self.progress
                let lastBox = LastSample()
                group.addTask {
                    await progress.run(clock: clock) {
                        let c = recorder.progressCounters()
                        let now = timeline.now()
                        let (lastRequests, lastTime) = lastBox.swap(requests: c.requests, time: now)
                        let rate = now > lastTime ? Double(c.requests - lastRequests) / (now - lastTime) : 0
                        return ProgressSnapshot(
                            elapsed: now, scheduled: driver.scheduled.current, done: c.done,
                            inFlight: driver.inFlight.current, requests: c.requests, requestRate: rate,
                            status429: c.status429, errors: c.errors, p99: c.p99)
                    }
                    return nil
                }
            }
            group.addTask {
                await rss.run(clock: clock)
                return nil
            }
            // Stops a misconfigured run early, and a run whose abortOnFail threshold failed.
            let control = self.control
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
        let activeSeconds = timeline.now()
        await nativeClient?.shutdown()
        recorder.finish()
        let result = await finishReport(
            profile: profile, backend: backend, recorder: recorder, directory: directory, runId: runId,
            stopReason: monitor.stopReason ?? stopReason, activeSeconds: activeSeconds, rss: rss.samples,
            scheduled: driver.scheduled.current, monitorMessage: monitor.message, transport: transportKind,
            lateSeconds: lateSeconds, ledger: ledgerLive ? .live(relay) : .atEnd, sourceNotes: sourceNotes)
        // The endpoint serves until the report is written, so a last scrape sees the final counts.
        await metricsEndpoint?.stop()
        return result
    }

    private func finishReport(
        profile: SoakProfile, backend: any SoakBackend, recorder: SoakRecorder, directory: URL, runId: String,
        stopReason: StopReason, activeSeconds: Double, rss: [SoakSummary.RSSSample], scheduled: Int,
        monitorMessage: String?, transport: SoakTransportKind, lateSeconds: Double,
        ledger ledgerSource: LedgerSource, sourceNotes: [String]
    ) async -> SoakRunResult {
        // A signal stopped the run even when the grace deadline then cut its in-flight work
        // (stopReason `deadline`): the exit code still says which signal.
        let signal = control.stopReason.flatMap { $0.isSignal ? $0 : nil }
        let interrupted = signal != nil
        // The ledger reaches the verdicts live (embedded emulator) or now, streamed from the backend.
        var ledgerEntries: Int? = nil
        var ledgerError: String? = nil
        switch ledgerSource {
        case .live(let relay):
            ledgerEntries = relay.count
        case .atEnd:
            do { ledgerEntries = try await backend.readLedger { recorder.ledgerRecorded($0) } } catch {
                ledgerError = "\(error)"
            }
        }
        var verdicts = recorder.finishVerdicts()
        if ledgerEntries == nil {
            verdicts = VerdictsReport(
                results: verdicts.results + [
                    ledgerError.map { ReconciliationVerdict.notAvailable(because: "--ledger: \($0)") }
                        ?? ReconciliationVerdict.notAvailable
                ],
                ignoredAttempts: verdicts.ignoredAttempts)
        }
        let counters = await backend.counters()
        let parts = recorder.summaryParts(activeSeconds: activeSeconds)
        var journeys = parts.journeys
        journeys.scheduled = scheduled
        if profile.load.model == .closed { journeys.dropped = nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var summary = SoakSummary(
            run: .init(
                runId: runId, profile: profile.name, profilePath: options.profilePath,
                soakVersion: OptoLinkSoak.version,
                startedAt: formatter.string(from: Date(timeIntervalSince1970: recorder.timeline.originEpoch)),
                startEpoch: recorder.timeline.originEpoch, durationSeconds: activeSeconds, interrupted: interrupted,
                stopReason: stopReason, backend: backend.kind, baseURL: backend.baseURL.absoluteString,
                loadModel: profile.load.model.rawValue, devices: profile.devices.count, seed: profile.seed,
                transport: transport.rawValue,
                tls: transport == .native ? Self.tlsNote(options.tls, baseURL: backend.baseURL) : nil),
            journeys: journeys, endpoints: parts.endpoints, totals: parts.totals, deferredMatch: parts.deferred,
            clicks: parts.clicks, opens: parts.opens, rss: rss,
            server: ledgerEntries == nil && counters == nil
                ? nil : .init(counters: counters, ledgerEntries: ledgerEntries),
            metrics: [:], verdicts: nil, thresholds: [])
        summary.run.profileHash = ProfileFingerprint.of(profile)
        summary.run.recording = recorder.recordingLag
        if let shard = options.shard {
            var sharding = SoakSummary.Sharding(count: shard.count, index: shard.index)
            sharding.startAt = options.startAt
            sharding.lateSeconds = lateSeconds
            summary.run.shards = sharding
        }
        summary.timeline = recorder.intervalSummary(activeSeconds: activeSeconds)
        summary.intervalSeconds = recorder.interval
        Self.placeRSS(rss, in: &summary.timeline, interval: recorder.interval)
        summary.rssScope =
            backend.kind == "embedded"
            ? "one process: the driver and the embedded emulator; rss[].emulator counts what the emulator holds"
            : "the driver only (the backend is remote)"
        let attemptsURL = directory.appendingPathComponent("attempts.csv")
        let callsURL = directory.appendingPathComponent("calls.csv")
        // The report is only worth its verdicts if every row reached the disk and reads back whole.
        var ioProblems: [String] = []
        for writer in [recorder.attemptsCSV, recorder.callsCSV] {
            if let failure = writer.failure { ioProblems.append("\(writer.url.path): \(failure)") }
        }
        // The verdicts ran live; the CSVs are read back only for the HTML report's charts, and only
        // while small enough (a long run's report keeps its memory flat and goes without them).
        var attempts: [AttemptRecord]? = nil
        let attemptsSize = (try? FileManager.default.attributesOfItem(atPath: attemptsURL.path)[.size] as? Int) ?? nil
        if let attemptsSize, attemptsSize <= Self.chartAttemptsLimitBytes {
            do { attempts = try ReportCSVReader.attempts(attemptsURL) } catch { ioProblems.append("\(error)") }
        }
        for url in [attemptsURL, callsURL] where !FileManager.default.fileExists(atPath: url.path) {
            ioProblems.append("\(url.path): missing")
        }
        summary.notes = sourceNotes + recorder.summaryNotes()
        if attempts == nil, attemptsSize != nil {
            summary.notes.append(RunJudgement.chartsLeftOutNote(shards: false))
        }
        RunJudgement.judge(&summary, verdicts: verdicts, thresholds: profile.expect.thresholds)
        if stopReason == .thresholdAborted, let monitorMessage {
            summary.thresholds.insert(
                RunJudgement.abortRow("the run was aborted: \(monitorMessage)"),
                at: summary.journeys.started == 0 ? 1 : 0)
        }
        summary.notes += RunJudgement.ioNotes(ioProblems)
        if let ledgerError { summary.notes.append("--ledger could not be read: \(ledgerError)") }
        if stopReason == .misconfigured, let monitorMessage { summary.notes.insert(monitorMessage, at: 0) }
        // Why the run cannot be judged, most fundamental first; the exit code comes from `result`.
        var invalidReason: String? = nil
        if stopReason == .misconfigured {
            invalidReason = monitorMessage ?? "stopped early: every response was refused (401/403/404)"
        } else if let ledgerError {
            // The run asked to be reconciled with a ledger and could not be: a CI gate must not pass it.
            invalidReason = "the --ledger file could not be read, so the run is not reconciled: \(ledgerError)"
        } else {
            invalidReason = RunJudgement.incompleteReason(ioProblems, shards: false)
        }
        let result = RunJudgement.settle(&summary, invalidReason: invalidReason, signal: signal)
        do {
            if let shard = options.shard {
                let manifest = ShardManifest(
                    runId: runId, shard: shard, planHash: summary.run.profileHash ?? ProfileFingerprint.of(profile),
                    startEpoch: recorder.timeline.originEpoch, startAt: options.startAt, lateSeconds: lateSeconds,
                    activeSeconds: activeSeconds, scheduled: scheduled, stopReason: stopReason,
                    interrupted: interrupted, backend: backend.kind, baseURL: backend.baseURL.absoluteString,
                    transport: transport.rawValue, profile: profile, tally: recorder.tally(),
                    attribution: recorder.attribution, deviceIds: recorder.deviceIds,
                    launchDeviceIds: recorder.launchDeviceIds, rss: rss, ioProblems: ioProblems)
                try AtomicFile.writeJSON(manifest, to: directory.appendingPathComponent(ShardManifest.fileName))
            }
            try RunJudgement.writeReport(summary, profile: profile, attempts: attempts, to: directory)
        } catch {
            log("error: cannot write summary to \(directory.path): \(error.localizedDescription)")
            return SoakRunResult(exitCode: 2, directory: directory, summary: summary, error: "\(error)")
        }
        log(SummaryText.render(summary))
        if let invalidReason {
            log("error: \(invalidReason)")
            return SoakRunResult(
                exitCode: result.exitCode, directory: directory, summary: summary, error: invalidReason)
        }
        var code = result.exitCode
        var junit = JUnitReport.run(summary)
        if let baseline = options.baselineDirectory {
            var compare = CompareOptions(baselinePath: baseline, currentPath: directory.path)
            compare.outDirectory = directory.appendingPathComponent("compare").path
            // A run whose own exit code already fails a gate (a signal, an abortOnFail stop) still gets
            // its comparison; one that passed but was cut at the grace deadline is refused (exit 2).
            compare.allowPartial = code != 0
            let compared = CompareCommand.run(compare, log: log)
            if let comparison = compared.comparison { junit.suites += JUnitReport.compare(comparison).suites }
            // Interrupted runs keep their own code; otherwise the worse of the run's and the comparison's.
            if code < 100 { code = max(code, compared.exitCode) }
        }
        if let path = options.junitPath, let error = RunJudgement.writeJUnit(junit, to: path, log: log) {
            return SoakRunResult(exitCode: 2, directory: directory, summary: summary, error: error)
        }
        return SoakRunResult(exitCode: code, directory: directory, summary: summary, error: nil)
    }

    /// Puts each interval's last RSS sample on its timeline row.
    static func placeRSS(
        _ samples: [SoakSummary.RSSSample], in timeline: inout [SoakSummary.Interval], interval: Double
    ) {
        guard interval > 0 else { return }
        for sample in samples {
            let slot = Int(sample.t / interval)
            if timeline.indices.contains(slot) { timeline[slot].rssBytes = sample.bytes }
        }
    }

    /// Largest `attempts.csv` read back for the HTML report's charts (bytes).
    static let chartAttemptsLimitBytes = SoakReportDirectory.chartAttemptsLimitBytes

    /// The verdicts' horizon for `profile` (see ``VerdictContext/horizonSeconds``).
    static func horizon(for profile: SoakProfile) -> Double {
        var windows = profile.expect.limits.values.map(\.windowSeconds)
        if let limits = (try? EmbeddedBackend.configuration(for: profile))?.limits {
            windows += StagingBucketClass.allCases.map { limits.rule(for: $0).windowSeconds }
        }
        return VerdictContext.horizon(
            timeout: profile.sdk.timeout, maxRetries: profile.sdk.maxRetries, longestWindow: windows.max() ?? 60)
    }

    /// Why `shard` cannot run with these options and this profile, or `nil`.
    static func shardProblem(_ shard: SoakShard, options: SoakRunOptions, profile: SoakProfile) -> String? {
        guard options.baseURL != nil else {
            return "--shard \(shard): needs --base-url. Every shard must drive one shared backend: with an "
                + "embedded emulator per shard, each would keep its own rate-limit windows and ledger, so the "
                + "limits and the reconciliation could not be judged on the whole (on one machine, use "
                + "--processes P instead)"
        }
        if profile.devices.count < shard.count {
            return "--shard \(shard): the profile has \(profile.devices.count) devices, fewer than the "
                + "\(shard.count) shards (each shard runs on the devices d with d mod N = I)"
        }
        return nil
    }

    /// Sleeps until the Unix time `startAt` (at most 0.25 s at a time, so a stop ends the wait);
    /// `false` when the run was stopped first.
    private func waitForStart(_ startAt: Double) async -> Bool {
        var announced = false
        while !control.isStopped {
            let wait = startAt - Date().timeIntervalSince1970
            if wait <= 0 { return true }
            if !announced, wait > 1 {
                log("waiting \(formatSeconds(wait)) s for --start-at \(startAt)")
                announced = true
            }
            try? await Task.sleep(for: RunTimeline.wait(Swift.min(wait, 0.25)))
        }
        return false
    }

    private func outputDirectory(for profile: SoakProfile) -> URL {
        if let out = options.outDirectory { return URL(fileURLWithPath: out, isDirectory: true) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return URL(fileURLWithPath: "Reports", isDirectory: true)
            .appendingPathComponent("\(profile.name)-\(formatter.string(from: Date()))", isDirectory: true)
    }
}

/// The previous progress sample (for the request rate).
private final class LastSample: Sendable {
    private let value = Mutex<(Int, Double)>((0, 0))
    /// Stores the new sample and returns the previous one.
    func swap(requests: Int, time: Double) -> (Int, Double) {
        value.withLock { v in
            defer { v = (requests, time) }
            return v
        }
    }
}

/// Where the run's ledger comes from: live through a relay, or read from the backend at the end.
enum LedgerSource {
    case live(LedgerRelay)
    case atEnd
}

/// Hands the embedded emulator's ledger entries to the run's recorder as the server stores them.
final class LedgerRelay: Sendable {
    private let recorder = Mutex<SoakRecorder?>(nil)
    private let entries = Mutex(0)

    /// Starts relaying to `recorder` (entries stored before are not this run's and are dropped).
    func connect(_ target: SoakRecorder) { recorder.withLock { $0 = target } }

    /// Entries relayed so far.
    var count: Int { entries.withLock { $0 } }

    /// The sink given to ``SoakBackend/followLedger(file:sink:)``.
    var forward: @Sendable (LedgerRow) -> Void {
        { [self] entry in
            guard let target = recorder.withLock({ $0 }) else { return }
            entries.withLock { $0 += 1 }
            target.ledgerRecorded(entry)
        }
    }
}
