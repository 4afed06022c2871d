import Foundation

/// A parsed `optolink-soak` command line.
package enum SoakCommand: Sendable, Equatable {
    case run(SoakRunOptions)
    case serve(ServeOptions)
    case bench(BenchOptions)
    case compare(CompareOptions)
    case merge(MergeOptions)
    case capacity(CapacityCommand.Options)
    /// Print this help text and exit 0.
    case help(String)
    case version

    /// Options of `serve`: the emulator on `host:port`. `nil` host/port: the `--config` file's
    /// value when it has one, else `127.0.0.1` / `8080`.
    package struct ServeOptions: Sendable, Equatable {
        package var host: String?
        package var port: Int?
        package var configPath: String?
        package var trustForwardedFor = false
        /// `--ledger-file PATH`: stream the ledger there as JSON lines instead of holding it in memory.
        package var ledgerFilePath: String?
        package init() {}
    }

    /// Options of `bench`.
    package struct BenchOptions: Sendable, Equatable {
        /// Where the results JSON goes; nil means a new `Reports/bench-<timestamp>/soak-bench.json`,
        /// so a bench overwrites an existing file only when `--out` names it.
        package var outPath: String?
        /// Device counts for the RSS slope.
        package var deviceCounts = [1_000, 10_000]
        /// Arrival rate (journeys/s) for the start-lag measurement.
        package var lagRate = 500.0
        /// Seconds per throughput / lag phase.
        package var seconds = 5.0
        /// The HTTP stack under the SDK in every phase (`--transport`).
        package var transport = SoakTransportKind.native
        package init() {}
    }
}

/// A command line that cannot be used (exit code 2), with a message naming the flag.
package struct SoakUsageError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}
