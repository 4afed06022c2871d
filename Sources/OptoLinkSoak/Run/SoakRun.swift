import Foundation
import OptoLink
import OptoLinkHTTP
import OptoLinkStaging
import SoakVerdicts

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
    /// This process's CPU seconds (user + system) now: the generator's CPU in the summary, on the
    /// progress line and in a shard's health. Tests that run shards inside one test process, beside
    /// other tests, replace it: that process's CPU is not the shard's.
    package var processCPUSeconds: @Sendable () -> Double = { ProcessCPUTime.now().own }
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
        if let problem = PathProblem.reportDirectory(directory.path, force: options.force) { return fail(problem) }
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
    package static func tlsNote(_ tls: TLSConfiguration, baseURL: URL) -> String? {
        guard baseURL.scheme?.lowercased() == "https" else { return nil }
        if !tls.verifiesPeer { return "NOT VERIFIED (--insecure)" }
        return tls.additionalTrustFile.map { "verified (+ --cacert \($0))" } ?? "verified"
    }

    func fail(_ message: String) -> SoakRunResult {
        log("error: \(message)")
        return SoakRunResult(exitCode: 2, directory: nil, summary: nil, error: message)
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
    func waitForStart(_ startAt: Double) async -> Bool {
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
        URL(fileURLWithPath: options.outDirectory ?? Self.defaultOut(profile), isDirectory: true)
    }

    /// `Reports/<profile>-<UTC timestamp>`: where a report goes without `--out`.
    static func defaultOut(_ profile: SoakProfile) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return "Reports/\(profile.name)-\(formatter.string(from: Date()))"
    }
}
