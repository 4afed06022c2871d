import Foundation

/// A parsed `optolink-soak` command line.
public enum SoakCommand: Sendable, Equatable {
    case run(SoakRunOptions)
    case serve(ServeOptions)
    case bench(BenchOptions)
    case compare(CompareOptions)
    case merge(MergeOptions)
    /// Print this help text and exit 0.
    case help(String)
    case version

    /// Options of `serve`: the emulator on `host:port`. `nil` host/port: the `--config` file's
    /// value when it has one, else `127.0.0.1` / `8080`.
    public struct ServeOptions: Sendable, Equatable {
        public var host: String?
        public var port: Int?
        public var configPath: String?
        public var trustForwardedFor = false
        /// `--ledger-file PATH`: stream the ledger there as JSON lines instead of holding it in memory.
        public var ledgerFilePath: String?
        public init() {}
    }

    /// Options of `bench`.
    public struct BenchOptions: Sendable, Equatable {
        /// Where the results JSON goes; nil means a new `Reports/bench-<timestamp>/soak-bench.json`,
        /// so a bench never overwrites the tracked `Benchmarks/results/` files unless asked to.
        public var outPath: String?
        /// Device counts for the RSS slope.
        public var deviceCounts = [1_000, 10_000]
        /// Arrival rate (journeys/s) for the start-lag measurement.
        public var lagRate = 500.0
        /// Seconds per throughput / lag phase.
        public var seconds = 5.0
        /// The HTTP stack under the SDK in every phase (`--transport`).
        public var transport = SoakTransportKind.native
        public init() {}
    }
}

/// A command line that cannot be used (exit code 2), with a message naming the flag.
public struct SoakUsageError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
