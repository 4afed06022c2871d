import Foundation
import OptoLinkStaging
import Synchronization
import SoakSupport

/// `optolink-soak run PROFILE --processes P`: the sharded path on one machine. Starts P shard
/// processes of this same executable (`run PROFILE --shard I/P --start-at T --run-id ID
/// --base-url URL`), all with one start instant a few seconds ahead, waits for them, then
/// merges their reports into `--out` (the shards' own reports go to `--out/shards/shard-I/`,
/// their messages to `shard-I.log` there).
///
/// Without `--base-url` this process starts the one embedded emulator and every shard drives
/// it, so the rate-limit windows and the ledger are shared and the merged reconciliation sees
/// every write. A SIGINT/SIGTERM is passed on to every shard; what the shards wrote is still
/// merged (a shard that wrote nothing is named as missing) and the exit code is 130/143.
package struct ProcessesRun: Sendable {
    package var options: SoakRunOptions
    package let control: RunControl
    /// The executable to start (default: this process's own).
    package var executable: URL = ProcessesRun.ownExecutable()
    /// Seconds between starting the shard processes and the plan's second 0.
    package var startLead = 3.0
    package var log: @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }

    package init(options: SoakRunOptions, control: RunControl) {
        self.options = options
        self.control = control
    }

    /// This process's executable (`/proc/self/exe` on Linux, else `argv[0]`).
    package static func ownExecutable() -> URL {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path)
        }
        return URL(fileURLWithPath: CommandLine.arguments.first ?? "optolink-soak")
    }

    /// The arguments of shard `index`: the parent's own run flags, minus what it handles itself,
    /// plus the shard's identity and the shared start, run id and backend.
    package static func shardArguments(
        _ options: SoakRunOptions, shard: SoakShard, startAt: Double, runId: String, baseURL: URL, out: URL
    ) -> [String] {
        var args = [
            "run", options.profilePath, "--shard", shard.description, "--start-at", "\(startAt)", "--run-id", runId,
            "--base-url", baseURL.absoluteString, "--out", out.path, "--no-progress", "--force",
        ]
        // The API key and the headers go through the environment (``shardEnvironment(_:inherited:)``).
        if options.baseURL != nil, let orgKey = options.orgKey { args += ["--org-key", orgKey] }
        if let devices = options.devices { args += ["--devices", String(devices)] }
        if let duration = options.duration { args += ["--duration", "\(duration)"] }
        if let rate = options.rate { args += ["--rate", "\(rate)"] }
        if let seed = options.seed { args += ["--seed", String(seed)] }
        if options.noThresholds { args.append("--no-thresholds") }
        for expression in options.extraThresholds { args += ["--threshold", expression] }
        args += ["--transport", options.transport.rawValue, "--pool", options.pool.rawValue]
        // --connections is a total for the machine: the shards split it as they split the budget.
        args += ["--connections", String(Swift.max(1, shard.share(of: options.connections)))]
        // P shard processes on one machine share its cores: by default each runs its share of loops.
        let loops =
            options.clientLoops ?? Swift.max(1, SoakClientLoops.default() / Swift.max(1, options.processes ?? 1))
        args += ["--client-loops", String(loops)]
        if let localIPs = options.localIPs { args += ["--local-ips", localIPs] }
        if options.forwardedFor { args.append("--forwarded-for") }
        if let file = options.tls.additionalTrustFile { args += ["--cacert", file] }
        if !options.tls.verifiesPeer { args.append("--insecure") }
        return args
    }

    /// Runs the shards and merges them; never throws (problems become exit code 2).
    package func execute() async -> SoakRunResult {
        func fail(_ message: String) -> SoakRunResult {
            log("error: \(message)")
            return SoakRunResult(exitCode: 2, directory: nil, summary: nil, error: message)
        }
        let processes = options.processes ?? 1
        let profile: SoakProfile
        do {
            profile = try options.apply(to: SoakProfile.load(contentsOf: URL(fileURLWithPath: options.profilePath)))
        } catch {
            return fail("\(error)")
        }
        if profile.devices.count < processes {
            return fail(
                "--processes \(processes): the profile has \(profile.devices.count) devices, fewer than the processes "
                    + "(each shard runs on its own devices)")
        }
        let out = URL(fileURLWithPath: options.outDirectory ?? SoakRun.defaultOut(profile), isDirectory: true)
        if let problem = PathProblem.reportDirectory(out.path, force: options.force) { return fail(problem) }
        var backend: (any SoakBackend)?
        let baseURL: URL
        if let url = options.baseURL {
            baseURL = url
        } else {
            do {
                let embedded = try await EmbeddedBackend.start(profile)
                backend = embedded
                baseURL = embedded.baseURL
            } catch {
                return fail("\(error)")
            }
        }
        let runId = options.runId ?? String(UInt64.random(in: 0..<(1 << 40)), radix: 36)
        let startAt = (Date().timeIntervalSince1970 + startLead).rounded(.up)
        backend?.runStarted(atEpoch: startAt)
        let shardsDirectory = out.appendingPathComponent("shards", isDirectory: true)
        log(
            "optolink-soak \(OptoLinkSoak.version): \(profile.name) as \(processes) shard processes · "
                + "\(backend?.kind ?? "remote") \(baseURL.absoluteString) · start at \(startAt) · run \(runId) → "
                + out.path)
        let outcomes = await runShards(
            processes, startAt: startAt, runId: runId, baseURL: baseURL, directory: shardsDirectory)
        return await merge(outcomes, processes: processes, backend: backend, out: out, shards: shardsDirectory)
    }

    /// Merges what the shards wrote into `out`, with the embedded emulator's ledger and counters
    /// (then stops it). A stop signal keeps its own exit code; otherwise a failed or missing shard
    /// makes the merged run invalid.
    private func merge(
        _ outcomes: [ShardOutcome], processes: Int, backend: (any SoakBackend)?, out: URL, shards shardsDirectory: URL
    ) async -> SoakRunResult {
        var ledger: [LedgerRow]? = nil
        var counters: JSONValue? = nil
        if let backend {
            ledger = try? await backend.ledger()
            counters = await backend.counters()
            await backend.stop()
        }
        let signal = control.stopReason.flatMap { $0.isSignal ? $0 : nil }
        var extras = MergeCommand.Extras(ledger: ledger, counters: counters, signal: signal)
        extras.backendKind = backend?.kind
        var present: [String] = []
        for outcome in outcomes {
            let manifest = outcome.directory.appendingPathComponent(ShardManifest.fileName)
            if FileManager.default.fileExists(atPath: manifest.path) {
                present.append(outcome.directory.path)
            }
            // A shard judges its own health only (``ShardHealth``): any exit but 0 means it failed.
            if outcome.status != 0 {
                extras.notes.append(
                    "shard \(outcome.shard) exited with \(outcome.status)"
                        + (FileManager.default.fileExists(atPath: manifest.path) ? "" : " and wrote no report")
                        + "; its messages: \(outcome.log.path)")
            }
        }
        guard !present.isEmpty else {
            let message = "no shard wrote a report; see the logs in \(shardsDirectory.path)"
            log("error: \(message)")
            var result = SoakRunResult(exitCode: 2, directory: nil, summary: nil, error: message)
            if let signal { result.exitCode = signal == .terminated ? 143 : 130 }
            return result
        }
        var mergeOptions = MergeOptions(directories: present)
        mergeOptions.outDirectory = out.path
        mergeOptions.allowPartial = true
        mergeOptions.force = true
        mergeOptions.junitPath = options.junitPath
        mergeOptions.ledgerPath = options.ledgerPath
        mergeOptions.ledgerWaitSeconds = options.ledgerWaitSeconds
        let failedShards = outcomes.filter { $0.status != 0 }.map { "\($0.shard)" }
        if signal == nil && (!failedShards.isEmpty || present.count < processes) {
            let missing = processes - present.count
            let problems =
                (missing > 0 ? ["\(missing) of \(processes) shards wrote no report"] : [])
                + (failedShards.isEmpty
                    ? [] : ["shard \(failedShards.joined(separator: ", ")) failed (a status other than 0)"])
            extras.invalidReason =
                problems.joined(separator: "; ") + ", so the merged report may cover only part of the plan"
        }
        return MergeCommand.run(mergeOptions, extras: extras, log: log)
    }

    /// How one shard process ended.
    struct ShardOutcome: Sendable {
        var shard: SoakShard
        var status: Int32
        var directory: URL
        var log: URL
    }

    /// Starts every shard, passes a stop on to them, and waits for all to exit.
    private func runShards(
        _ count: Int, startAt: Double, runId: String, baseURL: URL, directory: URL
    ) async -> [ShardOutcome] {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let control = self.control
        return await withTaskGroup(of: ShardOutcome.self) { group in
            for index in 0..<count {
                let shard = SoakShard(index: index, count: count)
                let shardDirectory = directory.appendingPathComponent("shard-\(index)", isDirectory: true)
                let logURL = directory.appendingPathComponent("shard-\(index).log")
                let arguments = Self.shardArguments(
                    options, shard: shard, startAt: startAt, runId: runId, baseURL: baseURL, out: shardDirectory)
                let executable = self.executable
                let log = self.log
                let environment = Self.shardEnvironment(options, inherited: ProcessInfo.processInfo.environment)
                group.addTask {
                    let status = await Self.runProcess(
                        executable, arguments: arguments, environment: environment, log: logURL, control: control,
                        report: log)
                    return ShardOutcome(shard: shard, status: status, directory: shardDirectory, log: logURL)
                }
            }
            var outcomes: [ShardOutcome] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes.sorted { $0.shard.index < $1.shard.index }
        }
    }

    /// Runs one child process with its output in `log`; passes the run's stop on to it as the
    /// same signal; returns its exit status (2 when it could not start).
    private static func runProcess(
        _ executable: URL, arguments: [String], environment: [String: String], log: URL, control: RunControl,
        report: @Sendable (String) -> Void
    ) async -> Int32 {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        guard let output = try? FileHandle(forWritingTo: log) else {
            report("error: cannot write \(log.path)")
            return 2
        }
        defer { try? output.close() }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = output
        process.standardError = output
        let exited = ExitStatus()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            process.terminationHandler = { finished in
                let status = finished.terminationStatus
                exited.set(status)
                continuation.resume(returning: status)
            }
            do {
                try process.run()
            } catch {
                report("error: cannot start \(executable.path): \(error.localizedDescription)")
                process.terminationHandler = nil
                continuation.resume(returning: 2)
                return
            }
            // Passes the run's stop on to the child as the parent got it: one signal for the stop,
            // a second once the parent's grace period was ended by a second signal (the child then
            // ends its in-flight calls at once too), never more, since the child counts them. A
            // dispatch timer, not a task, so it fires even when the cooperative pool is busy.
            let pid = process.processIdentifier
            let spawned = DispatchTime.now()
            let timer = DispatchSource.makeTimerSource(queue: .global())
            let sent = Mutex(0)
            timer.schedule(deadline: .now() + .milliseconds(100), repeating: .milliseconds(100))
            timer.setEventHandler {
                guard !exited.isSet else {
                    timer.cancel()
                    return
                }
                guard let reason = control.stopReason, reason.isSignal else { return }
                // The child announces itself once its handlers are set; before that a signal would
                // kill it instead of stopping it (unless it inherited the signal ignored, as from
                // the CLI). Give up waiting for the line after 10 s.
                let announced = ((try? FileManager.default.attributesOfItem(atPath: log.path))?[.size] as? Int ?? 0) > 0
                guard announced || DispatchTime.now() >= spawned + .seconds(10) else { return }
                let wanted = control.graceEnded ? 2 : 1
                let due = sent.withLock { count -> Bool in
                    guard count < wanted else { return false }
                    count += 1
                    return true
                }
                if due { kill(pid, reason == .terminated ? SIGTERM : SIGINT) }
            }
            timer.resume()
        }
    }
}

/// A child's exit status once it has exited (set by its termination handler, read by the task
/// that passes signals on, so no signal goes to a reused pid after the child is gone).
private final class ExitStatus: Sendable {
    private let status = Mutex<Int32?>(nil)

    func set(_ value: Int32) { status.withLock { $0 = value } }
    var isSet: Bool { status.withLock { $0 != nil } }
}
