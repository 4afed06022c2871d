import Foundation

/// Runs one probe of `optolink-soak capacity` with the `run` machinery: an unmeasured warm-up at
/// the probe's rate (its report is deleted), then the measured window, both open-model runs at a
/// constant arrival rate against the one backend of the search (so latency counts from each
/// journey's intended start: coordinated omission cannot hide a queue). With `--processes P` each
/// run is P shard processes merged, as `run --processes`.
struct CapacityProbeRunner: Sendable {
    /// The `run` flags every probe shares (profile, backend URL, transport, processes, seed, …).
    var base: SoakRunOptions
    /// The decoded profile, for the in-process runs (its grace is capped at the probe's length).
    var profile: SoakProfile
    var slo: [String]
    var probeSeconds: Double
    var warmup: Double
    /// Where the probes' own reports go (`<report>/probes/`).
    var directory: URL
    /// Whether the generator's CPU can be told apart from the backend's: it runs in shard
    /// processes, or the backend is remote.
    var generatorCPUSeparate: Bool
    var limits = CapacityGeneratorHealth.Limits()
    /// Stops the probe in flight (SIGINT/SIGTERM).
    let stop = CapacityProbeStop()
    var log: @Sendable (String) -> Void

    /// Runs probe `index` at `rate` journeys/s; a probe that could not run gives its error.
    func run(index: Int, rate: Double, purpose: CapacitySearch.Purpose) async -> Result<CapacityProbe, ProbeError> {
        let name = String(format: "%02d-%.6g", index, rate)
        if warmup > 0 {
            let out = directory.appendingPathComponent("\(name)-warmup", isDirectory: true)
            let warm = await execute(rate: rate, seconds: warmup, out: out)
            try? FileManager.default.removeItem(at: out)
            if warm.exitCode == 2 || warm.summary == nil {
                return .failure(ProbeError(message: "warm-up at \(format(rate))/s: \(warm.error ?? "it did not run")"))
            }
        }
        if let reason = stop.reason { return .failure(ProbeError(message: "stopped by \(reason)", signal: true)) }
        let out = directory.appendingPathComponent(name, isDirectory: true)
        let cpuBefore = ProcessCPUTime.now()
        let wallStart = ContinuousClock.now
        let result = await execute(rate: rate, seconds: probeSeconds, out: out)
        let wall = Swift.max(0.001, (ContinuousClock.now - wallStart) / .seconds(1))
        let cpuAfter = ProcessCPUTime.now()
        if let reason = stop.reason { return .failure(ProbeError(message: "stopped by \(reason)", signal: true)) }
        guard let summary = result.summary, result.exitCode != 2 else {
            return .failure(ProbeError(message: "probe at \(format(rate))/s: \(result.error ?? "it did not run")"))
        }
        let cores = Double(Swift.max(1, ProcessInfo.processInfo.activeProcessorCount))
        let children = (cpuAfter.children - cpuBefore.children) / wall / cores
        let own = (cpuAfter.own - cpuBefore.own) / wall / cores
        let generatorCPU: Double? =
            generatorCPUSeparate ? (base.processes != nil ? children : own) : nil
        let health = CapacityProbe.health(summary, cpuShare: generatorCPU, processCPUShare: own + children)
        let terms = CapacityProbe.terms(slo, in: summary)
        let verdict = CapacityProbe.verdict(terms: terms, health: health, limits: limits)
        return .success(
            CapacityProbe(
                index: index, rate: rate, purpose: purpose, seconds: probeSeconds, warmupSeconds: warmup,
                result: verdict.result, failed: verdict.failed, invalidReason: verdict.invalidReason, slo: terms,
                requestsPerSecond: summary.metrics["http.requests_per_second"] ?? 0,
                journeysPerSecond: Double(summary.journeys.started) / probeSeconds,
                limits429: summary.metrics["http.429.rate"] ?? 0, generator: health,
                report: out.path, note: verdict.note))
    }

    /// One `run` at `rate` for `seconds` into `out`.
    private func execute(rate: Double, seconds: Double, out: URL) async -> SoakRunResult {
        var options = base
        options.rate = rate
        options.duration = seconds
        options.outDirectory = out.path
        options.force = true
        options.progress = false
        options.noThresholds = true
        options.extraThresholds = slo
        let control = RunControl()
        stop.running(control)
        defer { stop.running(nil) }
        if options.processes != nil {
            var run = ProcessesRun(options: options, control: control)
            run.log = quiet
            return await run.execute()
        }
        var run = SoakRun(options: options)
        run.control = control
        run.log = quiet
        var capped = profile
        // Calls still in flight when the window closes get at most one window's length to end.
        capped.load.grace = Swift.min(profile.load.grace, Swift.max(1, seconds))
        return await run.execute(profile: capped)
    }

    /// Passes on only the run's errors and warnings; its summary goes to the probe's report.
    private var quiet: @Sendable (String) -> Void {
        { [log] line in
            if line.hasPrefix("error:") || line.hasPrefix("warning:") { log(line) }
        }
    }

    private func format(_ rate: Double) -> String { String(format: "%.6g", rate) }

    /// Why a probe could not run.
    struct ProbeError: Error, Sendable {
        var message: String
        /// A SIGINT/SIGTERM stopped it.
        var signal = false
    }
}
