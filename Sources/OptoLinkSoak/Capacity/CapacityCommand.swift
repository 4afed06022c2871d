import Foundation
import OptoLinkHTTP
import SoakVerdicts

/// `optolink-soak capacity PROFILE`: searches for the highest arrival rate the backend sustains
/// while the SLO holds (``CapacitySearch``), one probe at a time (``CapacityProbeRunner``), and
/// writes `capacity.json` / `capacity.txt` (``CapacityReport``). Its command line is
/// ``CapacitySubcommand``.
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
        /// When a probe counts the generator as saturated (`--max-late-starts`, `--max-dropped`,
        /// `--max-start-lag`, `--max-generator-cpu`), over the profile's `capacity.generatorLimits`.
        package var generatorLimits = CapacityGeneratorLimits()
        package init() {}
    }

    /// `run` flags with a value that each probe passes on, and those without one.
    static let runFlags: Set = [
        "--base-url", "--api-key", "--org-key", "--devices", "--seed", "--transport", "--pool", "--connections",
        "--client-loops", "--cacert", "--header", "--local-ips", "--processes", "--api-key-file", "--header-file",
        "--admin-token-file",
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
        var configured = CapacityProbeRunner(
            base: base, profile: profile, slo: slo, probeSeconds: probeSeconds, warmup: warmup,
            directory: directory.appendingPathComponent("probes", isDirectory: true),
            generatorCPUSeparate: options.run.processes != nil || options.run.baseURL != nil, log: log)
        let limits = options.generatorLimits.applied(
            to: (section.generatorLimits ?? CapacityGeneratorLimits()).applied(to: CapacityGeneratorHealth.Limits()))
        configured.limits = limits
        let runner = configured
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
            processes: options.run.processes ?? 1, generatorLimits: limits)
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
