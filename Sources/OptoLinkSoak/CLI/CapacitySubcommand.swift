import Foundation
import SoakVerdicts

/// `optolink-soak capacity PROFILE [options]`: the knee search (``CapacityCommand``).
package struct CapacitySubcommand: SoakSubcommand {
    package static let name = "capacity"
    package static let synopsis = (
        arguments: "PROFILE [options]", purpose: "find the highest rate the backend sustains within an SLO"
    )

    package var options: CapacityCommand.Options

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
        invalid when the generator itself saturated (CPU over 90 % of its cores, or, while the SLO
        held, over 5 % late starts, over 1 % dropped arrivals or start lag p99 over 100 ms): the
        search then stops, naming the generator, not the backend. 429s from declared rate limits
        are reported per probe and are not capacity failures.

        Writes capacity.json (every probe: rate, result, SLO values, 429 share, generator health;
        the knee with its bracket and the term that limited it), capacity.txt and report.html (the
        probes plotted against each SLO term, the knee marked) into the report directory, each
        probe's own report under probes/.

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
          --max-late-starts PCT, --max-dropped PCT, --max-start-lag DURATION, --max-generator-cpu PCT
                               when a probe counts the generator as saturated (default
                               capacity.generatorLimits, else 5%, 1%, 100ms and 90%; the
                               reasons are in docs/CAPACITY.md, "Generator limits")
          --base-url URL       search a real backend instead of the embedded emulator
          --api-key-file FILE, --api-key KEY (visible in the process list), --org-key ORG,
          --header-file FILE, --header 'N: V', --admin-token-file FILE, --devices N, --seed N,
          --transport KIND, --pool MODE, --connections N, --client-loops N, --cacert FILE,
          --insecure, --local-ips LIST, --forwarded-for
                               passed on to every probe's run, as `run --help` describes them
          --out DIR            report directory (default Reports/<profile>-capacity-<timestamp>/)
          --force              write into an --out directory that already holds a capacity report
          -h, --help           this help

        Exit codes: 0 a knee was found within the tolerance, or the highest rate held · 1 the SLO
        failed even at the minimum rate, or the backend did not recover after an overload ·
        2 inconclusive or could not run (the generator's limit, the probe budget ran out, bad input,
        unreachable backend) · 130/143 interrupted (SIGINT/SIGTERM; the report holds the probes run).
        """

    package init(arguments: [String]) throws {
        var options = CapacityCommand.Options()
        var profile: String? = nil
        var forwarded: [String] = []
        try FlagParser.walk(
            arguments,
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
                options.minRate = try FlagParser.number(flag, value(), 0.001...100_000.0, "journeys/s (0.001…100000)")
            case "--max-rate":
                options.maxRate = try FlagParser.number(flag, value(), 0.001...100_000.0, "journeys/s (0.001…100000)")
            case "--tolerance":
                let text = try value()
                guard let fraction = Thresholds.parseValue(text), (0.001...0.5).contains(fraction) else {
                    throw SoakUsageError(
                        message: "--tolerance: \"\(text)\" is not a share like 5% or 0.05 (0.1 %…50 %)")
                }
                options.tolerance = fraction
            case "--max-probes":
                options.maxProbes = try FlagParser.number(flag, value(), 1...100, "a probe count (1…100)")
            case "--probe-seconds":
                options.probeSeconds = try FlagParser.number(flag, value(), 1.0...3600.0, "seconds (1…3600)")
            case "--warmup": options.warmup = try FlagParser.number(flag, value(), 0.0...600.0, "seconds (0…600)")
            case "--max-late-starts": options.generatorLimits.lateShare = try Self.limit(flag, value(), .lateShare)
            case "--max-dropped": options.generatorLimits.droppedShare = try Self.limit(flag, value(), .droppedShare)
            case "--max-start-lag": options.generatorLimits.startLagP99 = try Self.limit(flag, value(), .startLagP99)
            case "--max-generator-cpu": options.generatorLimits.cpuShare = try Self.limit(flag, value(), .cpuShare)
            case _ where CapacityCommand.runFlags.contains(flag): forwarded += [flag, try value()]
            case _ where CapacityCommand.runSwitches.contains(flag): forwarded.append(flag)
            case "--out": options.outDirectory = try value()
            case "--force": options.force = true
            default: return false
            }
            return true
        }
        guard let profile else {
            throw SoakUsageError(message: "capacity: missing PROFILE (a profile JSON file with the open load model)")
        }
        options.profilePath = profile
        // Every probe's flags are checked by `run`'s own parser.
        options.run = try RunSubcommand(arguments: [profile] + forwarded).options
        if let low = options.minRate, let high = options.maxRate, high < low {
            throw SoakUsageError(message: "--max-rate \(high) is below --min-rate \(low)")
        }
        self.options = options
    }

    /// A generator limit's flag value: a share (`5%`, `0.05`) or a duration (`100ms`, `0.1`),
    /// in the range the profile field accepts.
    private static func limit(
        _ flag: String, _ text: String, _ key: CapacityGeneratorLimits.CodingKeys
    ) throws -> Double {
        let bounds = CapacityGeneratorLimits.bounds(key)
        guard let value = Thresholds.parseValue(text), bounds.range.contains(value) else {
            throw SoakUsageError(message: "\(flag): \"\(text)\" \(bounds.problem)")
        }
        return value
    }

    package func execute() async -> Int32 {
        for note in SecretSources.commandLineNotes(options.run) {
            FileHandle.standardError.write(Data((note + "\n").utf8))
        }
        let result = await CapacityCommand.run(options)
        if let directory = result.directory { print(directory.path) }
        return result.exitCode
    }
}
