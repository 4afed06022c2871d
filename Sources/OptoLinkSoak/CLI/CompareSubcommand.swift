import Foundation
import SoakVerdicts

/// `optolink-soak compare BASELINE CURRENT [options]`: two runs' reports compared for
/// regressions (``CompareCommand``).
package struct CompareSubcommand: SoakSubcommand {
    package static let name = "compare"
    package static let synopsis = (
        arguments: "BASELINE CURRENT [options]", purpose: "compare two runs' reports for regressions"
    )

    package var options: CompareOptions

    package static let usage = """
        USAGE: optolink-soak compare BASELINE CURRENT [options]

        Compares two report directories of the same profile (e.g. the last release and the
        release candidate): per endpoint counts, 429 and failure rates, attempt and call latency
        p50/p95/p99 with a Mann–Whitney U test on the histograms; per verdict the counts that
        changed. Writes compare.md (for a pull request), compare.json and report.html.

        Regression: the current profile's expect.regression rules when it has them
        ("match.call_latency.p95 < baseline * 1.10"), else the default rule (printed): each 1 s
        block's p50 and p95 is one observation; a latency shift significant over the quietest half
        of each run's blocks at p < 0.05 (Holm) that is also > 10 % and > 2 ms; any verdict count
        worse. A latency shift while the soak process itself was slowed (start lag p99 > 2× and
        > +10 ms) or either run's load generator fell behind (start lag p99 > 50 ms, > 5 % late
        starts, dropped arrivals) is inconclusive (exit 2): re-run both on a quiet machine.

        OPTIONS:
          --out DIR          where the files go (default CURRENT/compare/)
          --force            compare even when the profiles differ (noted in the output), and
                             overwrite an existing comparison in the output directory
          --allow-partial    compare even when a run did not run its course (noted in the output)
          --junit FILE       also write one JUnit test case per check
          --alpha P          default rule: significance level (default 0.05)
          --min-shift PCT    default rule: relative latency change, e.g. 10% (default 10%)
          --floor DURATION   default rule: absolute latency change, e.g. 5ms (default 2ms)
          -h, --help         this help

        A run that did not run its course (stopped by SIGINT/SIGTERM, stopped early as
        misconfigured or by an abortOnFail threshold, a merge with missing shards) has partial
        counts, which prove nothing either way: compare refuses it, baseline or current, with exit
        2 and a line saying why, unless --allow-partial. A run that ran its plan to the end and
        only had its last calls cut at the grace deadline is whole.

        Exit codes: 0 no regression · 1 regression · 2 could not compare (unreadable report,
        unknown schemaVersion, different profiles without --force, a partial run without
        --allow-partial, or inconclusive).
        """

    package init(arguments: [String]) throws {
        var paths: [String] = []
        var options = CompareOptions(baselinePath: "", currentPath: "")
        try FlagParser.walk(
            arguments,
            positional: { arg in
                guard paths.count < 2 else { throw SoakUsageError(message: "compare: unexpected argument \"\(arg)\"") }
                paths.append(arg)
            }
        ) { flag, value in
            switch flag {
            case "--out": options.outDirectory = try value()
            case "--force": options.force = true
            case "--allow-partial": options.allowPartial = true
            case "--junit": options.junitPath = try value()
            case "--alpha":
                options.rules.alpha = try FlagParser.number(flag, value(), 1e-9...0.5, "a significance level (0…0.5)")
            case "--min-shift": options.rules.minRelative = try Self.minShift(value())
            case "--floor": options.rules.minAbsoluteSeconds = try Self.floor(value())
            default: return false
            }
            return true
        }
        guard paths.count == 2 else {
            throw SoakUsageError(message: "compare: needs BASELINE and CURRENT report directories")
        }
        options.baselinePath = paths[0]
        options.currentPath = paths[1]
        self.options = options
    }

    /// `--min-shift PCT`: a percentage like `10%`, as a fraction (0…10).
    private static func minShift(_ text: String) throws -> Double {
        guard let fraction = Thresholds.parseValue(text), text.hasSuffix("%"), (0...10).contains(fraction) else {
            throw SoakUsageError(message: "--min-shift: \"\(text)\" is not a percentage like 10%")
        }
        return fraction
    }

    /// `--floor DURATION`: a duration like `5ms` or `0.01s`, in seconds (0…3600).
    private static func floor(_ text: String) throws -> Double {
        guard text.hasSuffix("s"), let seconds = Thresholds.parseValue(text), (0...3600).contains(seconds) else {
            throw SoakUsageError(message: "--floor: \"\(text)\" is not a duration like 5ms or 0.01s")
        }
        return seconds
    }

    package func execute() async -> Int32 {
        CompareCommand.run(options) { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }.exitCode
    }
}
