import Foundation
// The report types of the public API (SoakSummary, SoakReportError, ThresholdResult, StopReason)
// live in the lower targets; the product's one import brings them along.
@_exported import SoakRecords
@_exported import SoakVerdicts

/// The soak tester's library entry point: the CLI hands it the arguments and exits with
/// the code it returns.
///
/// ## The public API
/// The library is the `optolink-soak` command. Everything else in it is `package`: shared with
/// the CLI and the tests of this package, and free to change between releases. What another
/// package may use, and what stays stable, is this short list:
/// - ``OptoLinkSoak/main(_:)`` and ``OptoLinkSoak/version``: run a command line as the CLI does.
/// - ``SoakProfile`` (``SoakProfile/load(contentsOf:)``, ``SoakProfile/decode(_:)``) and
///   ``SoakProfileError``: load and validate a profile (`Profiles/README.md`).
/// - ``SoakRun``, ``SoakRunOptions`` and ``SoakRunResult``: run a profile from code, with the
///   same flags as `optolink-soak run`.
/// - ``SoakSummary`` (``SoakSummary/load(contentsOf:)``) with ``SoakSummary/RunMetadata`` (and its
///   ``SoakSummary/RecordingLag``),
///   ``SoakSummary/JourneySummary``, ``SoakSummary/Totals``, ``HistogramSummary``,
///   ``ThresholdResult``, ``StopReason`` and ``SoakReportError``: read a report's
///   `summary.json` (`Reports/README.md`). Its flat ``SoakSummary/metrics`` carry every threshold metric.
public enum OptoLinkSoak {
    /// The soak tester's version, as `--version` prints it and `summary.json` records it (`run.soakVersion`).
    public static let version = SoakVersion.current

    /// Runs one command line; returns the process exit code (0 pass · 1 threshold failed ·
    /// 2 could not run · 130 interrupted by SIGINT · 143 terminated by SIGTERM).
    public static func main(_ arguments: [String]) async -> Int32 {
        guard !arguments.isEmpty else {
            FileHandle.standardError.write(Data((SoakCommandLine.usage + "\n").utf8))
            return 2
        }
        let command: SoakCommand
        do {
            command = try SoakCommandLine.parse(arguments)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\nRun `optolink-soak --help`.\n".utf8))
            return 2
        }
        switch command {
        case .help(let text):
            print(text)
            return 0
        case .version:
            print("optolink-soak \(version)")
            return 0
        case .run(let options):
            let run = SoakRun(options: options)
            let control = run.control
            let requests = run.stopRequests
            // SIGINT (Ctrl-C) and SIGTERM both stop new work, let in-flight calls finish within
            // the grace period and write the report; the exit code says which one (130 / 143).
            // A second signal ends the grace period at once (the report is still written).
            let traps = [(SIGINT, "SIGINT", StopReason.interrupted), (SIGTERM, "SIGTERM", .terminated)].map {
                number, name, reason in
                SignalTrap(signal: number) {
                    let line = requests.record(name, stopping: control, for: reason)
                    FileHandle.standardError.write(Data("\n\(line)\n".utf8))
                }
            }
            defer { for trap in traps { trap.cancel() } }
            if let shard = options.shard {
                // `run --processes` waits for this line before it passes a stop on: from here on a
                // SIGINT/SIGTERM stops the shard gracefully instead of killing it.
                FileHandle.standardError.write(Data("shard \(shard): started (pid \(getpid()))\n".utf8))
            }
            if options.processes != nil {
                // The shards run in child processes; a signal here is passed on to each of them.
                let result = await ProcessesRun(options: options, control: control).execute()
                if let directory = result.directory { print(directory.path) }
                return result.exitCode
            }
            let result = await run.execute()
            if let directory = result.directory { print(directory.path) }
            return result.exitCode
        case .serve(let options):
            return await ServeCommand.run(options)
        case .bench(let options):
            return await SoakBench.run(options)
        case .merge(let options):
            let result = MergeCommand.run(options) { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
            if let directory = result.directory { print(directory.path) }
            return result.exitCode
        case .capacity(let options):
            let result = await CapacityCommand.run(options)
            if let directory = result.directory { print(directory.path) }
            return result.exitCode
        case .compare(let options):
            return CompareCommand.run(options) { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }.exitCode
        }
    }
}
