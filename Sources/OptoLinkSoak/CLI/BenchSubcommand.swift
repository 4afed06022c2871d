import Foundation

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

/// `optolink-soak bench [options]`: the driver's own overhead (``SoakBench``).
package struct BenchSubcommand: SoakSubcommand {
    package static let name = "bench"
    package static let synopsis = (arguments: "[options]", purpose: "measure the driver's own overhead")

    package var options: BenchOptions

    package static let usage = """
        USAGE: optolink-soak bench [options]

        Measures RSS per virtual device, driver vs bare URLSession request rate, and start lag,
        against the embedded emulator; prints a table and writes the JSON (build with -c release).

        OPTIONS:
          --out FILE        results file (default Reports/bench-<timestamp>/soak-bench.json)
          --devices N,N     device counts for the RSS slope (default 1000,10000)
          --rate R          arrival rate for the start-lag phase (default 500)
          --seconds S       seconds per phase (default 5)
          --transport KIND  native (default) or urlsession: the HTTP stack under the SDK
          -h, --help        this help
        """

    package init(arguments: [String]) throws {
        var options = BenchOptions()
        try FlagParser.walk(arguments, positional: FlagParser.noPositional(Self.name)) { flag, value in
            switch flag {
            case "--out": options.outPath = try value()
            case "--devices": options.deviceCounts = try Self.deviceCounts(value())
            case "--rate":
                options.lagRate = try FlagParser.number(flag, value(), 1.0...100_000.0, "journeys/s (1…100000)")
            case "--seconds": options.seconds = try FlagParser.number(flag, value(), 0.5...600.0, "seconds (0.5…600)")
            case "--transport": options.transport = try FlagParser.transport(value())
            default: return false
            }
            return true
        }
        self.options = options
    }

    /// `--devices N,N`: two increasing device counts.
    private static func deviceCounts(_ text: String) throws -> [Int] {
        let counts = text.split(separator: ",").compactMap { Int($0) }
        guard counts.count == 2, counts.allSatisfy({ (1...200_000).contains($0) }), counts[0] < counts[1] else {
            throw SoakUsageError(message: "--devices: \"\(text)\" is not two increasing counts like 1000,10000")
        }
        return counts
    }

    package func execute() async -> Int32 {
        await SoakBench.run(options)
    }
}
