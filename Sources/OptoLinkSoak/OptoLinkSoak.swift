import Foundation

/// The soak tester's library entry point: the CLI hands it the arguments and exits with
/// the code it returns.
public enum OptoLinkSoak {
    public static let version = "0.1.0"

    /// Runs one command line; returns the process exit code (0 pass · 1 threshold failed ·
    /// 2 could not run · 130 interrupted).
    public static func main(_ arguments: [String]) async -> Int32 {
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
            let trap = SignalTrap {
                FileHandle.standardError.write(Data("\ninterrupted: stopping new work, finishing in-flight calls…\n".utf8))
                control.stop("interrupted")
            }
            defer { trap.cancel() }
            let result = await run.execute()
            if let directory = result.directory { print(directory.path) }
            return result.exitCode
        case .serve(let options):
            return await ServeCommand.run(options)
        case .bench(let options):
            return await SoakBench.run(options)
        }
    }
}
