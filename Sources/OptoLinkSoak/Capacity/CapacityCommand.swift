import Foundation
import OptoLinkHTTP
import SoakVerdicts

/// `optolink-soak capacity PROFILE`: searches for the highest arrival rate the backend sustains
/// while the SLO holds (``CapacitySearch``), one probe at a time (``CapacityProbeRunner``), and
/// writes `capacity.json` / `capacity.txt` (``CapacityReport``).
package enum CapacityCommand {
    /// The command's inputs; `nil` fields come from the profile's `capacity` section, then the defaults.
    package struct Options: Sendable, Equatable {
        package var profilePath = ""
        package var slo: [String] = []
        package var minRate: Double?
        package var maxRate: Double?
        package var tolerance: Double?
        package var maxProbes: Int?
        package var probeSeconds: Double?
        package var warmup: Double?
        package var outDirectory: String?
        package var force = false
        /// The flags every probe passes on to `run` (backend, devices, seed, transport, processes),
        /// parsed and checked by `run`'s own parser.
        package var run = SoakRunOptions(profilePath: "")
        package init() {}
    }

    package static let usage = """
        USAGE: optolink-soak capacity PROFILE [options]

        Finds the knee: the highest arrival rate (journeys/s, open model) the backend sustains while
        the SLO holds. Each probe holds one rate: an unmeasured warm-up (--warmup), then the measured
        window (--probe-seconds), latency counted from each journey's intended start. The search
        doubles the rate from --min-rate until a probe fails, probes the last passing rate once more
        (the backend must recover), then bisects until the bracket is within --tolerance, in at most
        --max-probes probes. Without --base-url one embedded emulator (the profile's backend section)
        serves every probe.

        A probe passes when every SLO term holds, fails on the first term that does not, and is
        invalid when the generator itself saturated (CPU over 90 % of its cores, or late starts,
        dropped arrivals or start lag while the SLO held): the search then stops, naming the
        generator, not the backend. 429s from declared rate limits are reported per probe and are
        not capacity failures.

        Writes capacity.json (every probe: rate, result, SLO values, 429 share, generator health;
        the knee with its bracket and the term that limited it) and capacity.txt into the report
        directory, each probe's own report under probes/.

        OPTIONS:
          --slo EXPR           an SLO term (repeatable; replaces the profile's capacity.slo), in the
                               threshold syntax: 'http.failed.rate < 0.01',
                               'events.call_latency.p99 < 250ms'
          --min-rate R         first probe, journeys/s (default capacity.minRate, else the profile's
                               load.startRate when > 0, else 10)
          --max-rate R         highest rate probed (default capacity.maxRate, else 100000)
          --tolerance PCT      stop when the bracket is this narrow, e.g. 5% or 0.05 (default 5%)
          --max-probes N       probe budget, the recovery probe included (default 8)
          --probe-seconds S    measured window per probe (default capacity.probeSeconds, else 10)
          --warmup S           unmeasured load before each probe (default capacity.warmup, else 2; 0: none)
          --processes P        run each probe as P shard processes (as run --processes), when one
                               process cannot generate the load
          --base-url URL       search a real backend instead of the embedded emulator
          --api-key KEY, --org-key ORG, --devices N, --seed N, --transport KIND, --pool MODE,
          --connections N, --client-loops N, --cacert FILE, --insecure, --header 'N: V',
          --local-ips LIST, --forwarded-for
                               passed on to every probe's run, as `run --help` describes them
          --out DIR            report directory (default Reports/<profile>-capacity-<timestamp>/)
          --force              write into an --out directory that already holds a capacity report
          -h, --help           this help

        Exit codes: 0 a knee was found within the tolerance, or the highest rate held · 1 the SLO
        failed even at the minimum rate, or the backend did not recover after an overload ·
        2 inconclusive or could not run (the generator's limit, the probe budget ran out, bad input,
        unreachable backend) · 130/143 interrupted (SIGINT/SIGTERM; the report holds the probes run).
        """

    /// Parses `capacity`'s arguments (after the command name).
    /// - Throws: ``SoakUsageError`` naming the flag and the problem.
    package static func parse(_ args: [String]) throws -> SoakCommand {
        var options = Options()
        var profile: String? = nil
        var forwarded: [String] = []
        let wantsHelp = try SoakCommandLine.walk(
            args,
            positional: { arg in
                guard profile == nil else { throw SoakUsageError(message: "capacity: unexpected argument \"\(arg)\"") }
                profile = arg
            }
        ) { flag, value in
            switch flag {
            case "--slo":
                let expression = try value()
                if let problem = Thresholds.problem(in: expression) {
                    throw SoakUsageError(message: "--slo '\(expression)': \(problem)")
                }
                options.slo.append(expression)
            case "--min-rate":
                options.minRate = try SoakCommandLine.number(
                    flag, value(), 0.001...100_000.0, "journeys/s (0.001…100000)")
            case "--max-rate":
                options.maxRate = try SoakCommandLine.number(
                    flag, value(), 0.001...100_000.0, "journeys/s (0.001…100000)")
            case "--tolerance":
                let text = try value()
                guard let fraction = Thresholds.parseValue(text), (0.001...0.5).contains(fraction) else {
                    throw SoakUsageError(
                        message: "--tolerance: \"\(text)\" is not a share like 5% or 0.05 (0.1 %…50 %)")
                }
                options.tolerance = fraction
            case "--max-probes":
                options.maxProbes = try SoakCommandLine.number(flag, value(), 1...100, "a probe count (1…100)")
            case "--probe-seconds":
                options.probeSeconds = try SoakCommandLine.number(flag, value(), 1.0...3600.0, "seconds (1…3600)")
            case "--warmup": options.warmup = try SoakCommandLine.number(flag, value(), 0.0...600.0, "seconds (0…600)")
            case _ where runFlags.contains(flag): forwarded += [flag, try value()]
            case _ where runSwitches.contains(flag): forwarded.append(flag)
            case "--out": options.outDirectory = try value()
            case "--force": options.force = true
            default: return false
            }
            return true
        }
        if wantsHelp { return .help(usage) }
        guard let profile else {
            throw SoakUsageError(message: "capacity: missing PROFILE (a profile JSON file with the open load model)")
        }
        options.profilePath = profile
        guard case .run(let run) = try SoakCommandLine.parse(["run", profile] + forwarded) else {
            throw SoakUsageError(message: "capacity: the run flags did not parse as a run")
        }
        options.run = run
        if let low = options.minRate, let high = options.maxRate, high < low {
            throw SoakUsageError(message: "--max-rate \(high) is below --min-rate \(low)")
        }
        return .capacity(options)
    }

    /// `run` flags with a value that each probe passes on, and those without one.
    static let runFlags: Set = [
        "--base-url", "--api-key", "--org-key", "--devices", "--seed", "--transport", "--pool", "--connections",
        "--client-loops", "--cacert", "--header", "--local-ips", "--processes",
    ]
    static let runSwitches: Set = ["--insecure", "--forwarded-for"]

    /// Runs the search; returns the exit code (see ``usage``). Never throws.
    package static func run(
        _ options: Options,
        log: @escaping @Sendable (String) -> Void = {
            FileHandle.standardError.write(Data(($0 + "\n").utf8))
        }
    ) async -> (exitCode: Int32, directory: URL?) {
        func fail(_ message: String) -> (exitCode: Int32, directory: URL?) {
            log("error: \(message)")
            return (2, nil)
        }
        let profile: SoakProfile
        do {
            profile = try SoakProfile.load(contentsOf: URL(fileURLWithPath: options.profilePath))
        } catch {
            return fail("\(error)")
        }
        guard profile.load.model == .open else {
            return fail(
                "capacity: \(profile.name) uses the closed load model; a capacity search holds arrival rates (load.model \"open\")"
            )
        }
        let section = profile.capacity ?? CapacitySettings()
        let slo = options.slo.isEmpty ? section.slo : options.slo
        guard !slo.isEmpty else {
            return fail(
                "capacity: no SLO. Give --slo EXPR (e.g. --slo 'http.failed.rate < 0.01'), or a \"capacity\": "
                    + "{\"slo\": [...]} section in the profile")
        }
        let startRate = profile.load.startRate > 0 ? profile.load.startRate : nil
        let search = CapacitySearch.Settings(
            minRate: options.minRate ?? section.minRate ?? startRate ?? 10,
            maxRate: options.maxRate ?? section.maxRate ?? 100_000,
            tolerance: options.tolerance ?? section.tolerance ?? 0.05,
            maxProbes: options.maxProbes ?? section.maxProbes ?? 8)
        if let problem = search.problem {
            return fail("capacity: \(problem) (--min-rate, --max-rate, --tolerance, --max-probes)")
        }
        let probeSeconds = options.probeSeconds ?? section.probeSeconds ?? 10
        let warmup = options.warmup ?? section.warmup ?? 2
        let directory = URL(fileURLWithPath: options.outDirectory ?? defaultOut(profile), isDirectory: true)
        if let problem = PathProblem.creatingDirectory(directory.path) { return fail("--out \(problem)") }
        let reportFile = directory.appendingPathComponent("capacity.json")
        if !options.force, FileManager.default.fileExists(atPath: reportFile.path) {
            return fail(
                "--out \(directory.path): already holds a capacity report; choose a new directory, or pass --force")
        }
        // One backend serves every probe: the given one, or an embedded emulator started here.
        let backend: EmbeddedBackend?
        do {
            backend = options.run.baseURL == nil ? try await EmbeddedBackend.start(profile) : nil
        } catch {
            return fail("\(error)")
        }
        do {
            // The emulator's ledger goes to a file as it grows (as `run`'s does), so its memory
            // stays flat over every probe of the search.
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            _ = try backend?.followLedger(file: directory.appendingPathComponent("ledger.jsonl")) { _ in }
        } catch {
            await backend?.stop()
            return fail("--out \(directory.path): cannot write there (\(error.localizedDescription))")
        }
        var base = options.run
        base.profilePath = options.profilePath
        base.baseURL = options.run.baseURL ?? backend?.baseURL
        guard let baseURL = base.baseURL else { return fail("capacity: no backend URL") }
        let runner = CapacityProbeRunner(
            base: base, profile: profile, slo: slo, probeSeconds: probeSeconds, warmup: warmup,
            directory: directory.appendingPathComponent("probes", isDirectory: true),
            generatorCPUSeparate: options.run.processes != nil || options.run.baseURL != nil, log: log)
        let traps = [(SIGINT, "SIGINT", StopReason.interrupted), (SIGTERM, "SIGTERM", .terminated)].map {
            number, name, reason in
            SignalTrap(signal: number) {
                log("\n\(name): stopping the probe in flight; the report keeps the probes run so far")
                runner.stop.stop(name, as: reason)
            }
        }
        defer { for trap in traps { trap.cancel() } }
        let settings = CapacityReport.Settings(
            minRate: search.minRate, maxRate: search.maxRate, tolerance: search.tolerance,
            maxProbes: search.maxProbes, probeSeconds: probeSeconds, warmupSeconds: warmup,
            processes: options.run.processes ?? 1)
        let backendName = backend == nil ? baseURL.absoluteString : "the embedded emulator (\(baseURL.absoluteString))"
        log(
            "optolink-soak capacity: \(profile.name) against \(backendName) · SLO \(slo.joined(separator: " AND ")) · "
                + "\(search.maxProbes) probes at most of \(probeSeconds) s (+ \(warmup) s warm-up) → \(directory.path)")
        var probes: [CapacityProbe] = []
        var state = CapacitySearch(search)
        var step = state.start()
        var report: CapacityReport
        // Bounded: the search asks for at most `maxProbes` probes; the loop allows no more.
        while probes.count < search.maxProbes, case .probe(let rate, let purpose) = step {
            log("probe \(probes.count + 1): \(CapacityReport.rate(rate)) journeys/s (\(purpose.rawValue)) …")
            switch await runner.run(index: probes.count + 1, rate: rate, purpose: purpose) {
            case .success(let probe):
                probes.append(probe)
                let why = (probe.failed ?? probe.invalidReason).map { ": \($0)" } ?? ""
                log("  \(probe.result)\(why) · \(CapacityReport.rate(probe.requestsPerSecond)) requests/s")
                step = state.record(probe.outcome)
            case .failure(let error):
                report = CapacityReport(
                    profile: profile.name, backend: baseURL.absoluteString, slo: slo, settings: settings,
                    ending: "error", message: error.message, exitCode: error.signal ? signalCode(runner) : 2,
                    knee: nil, probes: probes, notes: CapacityReport.notes(probes))
                return await finish(report, backend: backend, directory: directory, log: log)
            }
        }
        guard case .done(let answer) = step else {
            await backend?.stop()
            return fail("capacity: the search asked for more probes than its budget (a bug); \(probes.count) run")
        }
        report = CapacityReport.make(
            answer: answer, probes: probes, profile: profile.name, backend: baseURL.absoluteString, slo: slo,
            settings: settings)
        return await finish(report, backend: backend, directory: directory, log: log)
    }

    private static func signalCode(_ runner: CapacityProbeRunner) -> Int32 {
        runner.stop.reason == "SIGTERM" ? 143 : 130
    }

    private static func finish(
        _ report: CapacityReport, backend: EmbeddedBackend?, directory: URL, log: (String) -> Void
    ) async -> (exitCode: Int32, directory: URL?) {
        await backend?.stop()
        do {
            try report.write(to: directory)
        } catch {
            log("error: cannot write the capacity report into \(directory.path): \(error.localizedDescription)")
            return (2, nil)
        }
        log(report.text)
        return (report.exitCode, directory)
    }

    private static func defaultOut(_ profile: SoakProfile) -> String {
        let stamp = ISO8601DateFormatter().string(from: Date()).filter { $0.isNumber || $0 == "T" }
        return "Reports/\(profile.name)-capacity-\(stamp)"
    }
}
