import Foundation

/// `optolink-soak merge DIR... --out DIR [options]`: the shards' reports merged into one
/// (``MergeCommand``).
package struct MergeSubcommand: SoakSubcommand {
    package static let name = "merge"
    package static let synopsis = (
        arguments: "DIR... --out DIR", purpose: "merge the reports of a plan's shards (run --shard)"
    )

    package var options: MergeOptions

    package static let usage = """
        USAGE: optolink-soak merge DIR... --out DIR [options]

        Merges the reports of one plan's shards (each written by `run PROFILE --shard I/N`) into
        the report a single process running the whole plan would have written: counts add,
        latency histograms merge exactly from their bucket counts (each percentile within the
        histogram's 1 % precision of the union of samples), every verdict is re-run on the union
        of the shards' attempts and calls in time order (a per-IP or per-key limit window spans
        shards), and the profile's thresholds are judged on the merged result (a shard judges
        only its own health). Writes summary.json, summary.txt, report.html, profile.json,
        attempts.csv and calls.csv (every shard's rows in time order, streamed) into --out, and
        ledger.jsonl when there is a ledger.

        Refuses shards of different plans (profile hash), a shard given twice, and a missing
        shard or one that failed its health check (it names them) unless --allow-partial.

        OPTIONS:
          --out DIR          where the merged report goes (required)
          --allow-partial    merge even when shards are missing or unhealthy; the report names them
          --force            write into an --out directory that already holds a report
          --ledger FILE      server ledger for the reconciliation verdict: JSON Lines (one
                             entry per line, as `serve --ledger-file` writes) or one JSON
                             array; the merged report keeps it as ledger.jsonl
          --ledger-wait SECONDS
                             with --ledger: wait up to SECONDS (default 5) for the file to hold
                             a row at or after the shards' last successful write, then until it
                             has not grown for 1 s (rows written out of order); one that stops
                             growing for half of SECONDS ends the wait sooner. Calls past its
                             last row are then reported as not covered, never as lost
          --junit FILE       also write thresholds and verdicts as JUnit XML to FILE
          --threshold EXPR   judge this threshold too (repeatable), e.g.
                             --threshold 'limits.match.too_lenient == 0'
          --no-thresholds    leave out the profile's thresholds (--threshold ones still apply)
          -h, --help         this help

        Exit codes: 0 thresholds passed · 1 a threshold failed · 2 could not merge (refused,
        unreadable shard, or a shard's report is incomplete).
        """

    package init(arguments: [String]) throws {
        var options = MergeOptions(directories: [])
        try FlagParser.walk(arguments, positional: { options.directories.append($0) }) { flag, value in
            switch flag {
            case "--out": options.outDirectory = try value()
            case "--allow-partial": options.allowPartial = true
            case "--force": options.force = true
            case "--ledger": options.ledgerPath = try value()
            case "--ledger-wait":
                options.ledgerWaitSeconds = try FlagParser.number(flag, value(), 0.0...3600.0, "seconds (0…3600)")
            case "--junit": options.junitPath = try value()
            case "--threshold": options.extraThresholds.append(try value())
            case "--no-thresholds": options.noThresholds = true
            default: return false
            }
            return true
        }
        guard !options.directories.isEmpty else {
            throw SoakUsageError(message: "merge: needs the shards' report directories (DIR...)")
        }
        guard options.outDirectory != nil else {
            throw SoakUsageError(message: "merge: --out DIR is required (where the merged report goes)")
        }
        if options.ledgerPath == nil && options.ledgerWaitSeconds != SoakRunOptions.defaultLedgerWaitSeconds {
            throw SoakUsageError(message: "--ledger-wait: only with --ledger FILE (it bounds the wait for that file)")
        }
        self.options = options
    }

    package func execute() async -> Int32 {
        let result = MergeCommand.run(options) { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
        if let directory = result.directory { print(directory.path) }
        return result.exitCode
    }
}
