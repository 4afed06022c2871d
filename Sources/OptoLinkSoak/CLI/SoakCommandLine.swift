import Foundation
import OptoLinkHTTP
import SoakVerdicts

/// Parses `optolink-soak` arguments (hand-rolled: the package has no dependencies).
///
/// ```
/// optolink-soak run PROFILE [--base-url URL --api-key KEY --org-key ORG] [--devices N]
///               [--duration SECONDS] [--rate PER_SECOND] [--seed N] [--out DIR] [--ledger FILE] [--no-progress]
/// optolink-soak serve [--port N] [--host H] [--config FILE] [--trust-forwarded-for]
/// optolink-soak bench [--out FILE] [--devices N,N] [--rate R] [--seconds S]
/// optolink-soak --version | --help | <command> --help
/// ```
package enum SoakCommandLine {
    package static let usage = """
        optolink-soak — load and rate-limit soak tester for the OptoLink SDK

        USAGE:
          optolink-soak run PROFILE [options]   replay a profile with thousands of virtual devices
          optolink-soak serve [options]         run the staging emulator in the foreground
          optolink-soak bench [options]         measure the driver's own overhead
          optolink-soak compare BASELINE CURRENT [options]
                                                compare two runs' reports for regressions
          optolink-soak merge DIR... --out DIR  merge the reports of a plan's shards (run --shard)
          optolink-soak capacity PROFILE [options]
                                                find the highest rate the backend sustains within an SLO
          optolink-soak --version

        Run `optolink-soak <command> --help` for a command's options.
        Exit codes: 0 thresholds passed · 1 a threshold failed · 2 could not run ·
        130 interrupted (SIGINT/Ctrl-C) · 143 terminated (SIGTERM); both still write the report.
        summary.json "result" says the same in one word: passed, failed, invalid, interrupted, terminated.
        """

    package static let runUsage = """
        USAGE: optolink-soak run PROFILE [options]

        Replays PROFILE (JSON, see Profiles/README.md). Without --base-url the embedded
        staging emulator is started on 127.0.0.1 with the profile's backend section.

        OPTIONS:
          --base-url URL       drive a real staging backend instead of the embedded emulator
          --api-key KEY        CLIENT API key (overrides the profile's sdk.apiKey)
          --org-key ORG        org key (overrides sdk.orgKey)
          --devices N          number of virtual devices (replaces devices.count). A profile's
                               load.iterations is a total of journeys, not per device: more
                               devices share the same total (use --duration to run longer)
          --duration SECONDS   when new work stops: no journey or step starts after it; calls
                               in flight then get up to the profile's load.grace (default 15 s)
                               to end, then are cut (cancelled_by_run). A journey with steps
                               left at the duration counts as unfinished, so the run lasts at
                               most duration + grace. A shorter run can miss count thresholds.
          --rate PER_SECOND    open model: constant arrival rate (> 0) replacing the stages
          --seed N             random seed (unsigned integer)
          --out DIR            report directory (default Reports/<profile>-<timestamp>/); a
                               directory that already holds a report is refused
          --force              write into an --out directory that already holds a report
          --ledger FILE        server ledger exported from the real backend (a JSON array, or JSON
                               lines: one entry per line, read as a stream) at the end of the run;
                               if it cannot be read then, the report is written and the exit is 2
          --ledger-file PATH   embedded emulator: stream its ledger there as JSON lines (default
                               ledger.jsonl in the report directory); never held in memory
          --transport KIND     native (default) or urlsession: the HTTP stack under the SDK. native
                               is the package's own client (http://, and https:// over the system
                               OpenSSL on Linux); urlsession is the path iOS apps take on Linux,
                               for fidelity checks. The report names the transport used
          --cacert FILE        native transport, https://: trust the CA certificates in FILE (PEM)
                               besides the system store (SSL_CERT_FILE / SSL_CERT_DIR also work)
          --insecure           native transport, https://: do not verify the server's certificate
                               or name (the report's header and summary.json say so)
          --pool MODE          native transport: shared (default; one bounded pool per host) or
                               per-device (one keep-alive connection per virtual device)
          --connections N      native transport, shared pool: most connections per host, in all
                               (default 128; --processes P splits it between the shards); fewer
                               client loops run when N is below their count
          --client-loops N     native transport: event loop threads (default: one per core); the
                               virtual devices' journeys run on them, spread by device. Fewer
                               loops spend less CPU per request; more keep up with more load
          --header 'N: V'      add a header to every SDK request and click (repeatable), e.g. for an
                               auth proxy or a WAF; the contract's own headers (Authorization,
                               X-API-Key, X-OptoLink-SDK, Content-Type, …) cannot be overridden
          --local-ips LIST     native transport: each virtual device's requests leave from its own
                               local address (k6's --local-ips), so a server that keys on the
                               socket peer sees the profile's address plan: devices behind the
                               shared NAT share one address, every other device has its own.
                               LIST: comma-separated addresses, ranges, CIDRs, IPv4 and IPv6
                               mixed, e.g. 127.0.0.2-127.0.0.201,::1 (on Linux all of
                               127.0.0.0/8 is local). Replaces devices.localIPs; no
                               X-Forwarded-For is sent, and the embedded emulator keys on the peer
          --forwarded-for      with --local-ips: also send each device's address as X-Forwarded-For
          --no-progress        no progress line
          --threshold EXPR     add a threshold to the profile's (repeatable), e.g.
                               --threshold 'match.call_latency.p95 < 300ms'
          --no-thresholds      ignore the profile's thresholds (--threshold ones still apply)
          --junit FILE         also write thresholds and verdicts as JUnit XML to FILE
          --baseline DIR       then compare with that earlier report (see `compare --help`);
                               the comparison goes to <report>/compare/, exit 1 on a regression,
                               2 when it cannot compare (e.g. the baseline was interrupted)
          --metrics-listen HOST:PORT
                               serve live Prometheus metrics at http://HOST:PORT/metrics while
                               the run lasts (loopback only; port 0 = any free port, printed)
          -h, --help           this help

        MORE LOAD THAN ONE PROCESS (see Profiles/README.md, "Running on many machines"):
          --processes P        run the plan as P shard processes of this executable on this
                               machine, then merge them into --out (shards in --out/shards/).
                               Without --base-url this process hosts the one embedded emulator
                               and every shard drives it, so limits and the ledger stay whole
          --shard I/N          run only shard I (0-based) of N: journeys k with k mod N = I, on
                               devices d with d mod N = I (ids, seeds and client IPs stay global).
                               Needs --base-url (one backend shared by all shards). Writes
                               shard.json beside the usual report; combine with `merge`
          --start-at EPOCH     start the plan's second 0 at this Unix time (seconds), the same
                               for every shard; a shard that starts later says so and its
                               missed arrivals count as late starts
          --run-id ID          the run id (prefix of every correlation id); give every shard the same
        """

    package static let serveUsage = """
        USAGE: optolink-soak serve [options]

        Runs the staging emulator until Ctrl-C (default fixtures: org acme, key opl_sdk_test_acme_client).

        OPTIONS:
          --port N               port (default: the config's port, else 8080; 0 = any free port)
          --host H               address to bind (default: the config's host, else 127.0.0.1)
          --config FILE          StagingConfiguration JSON (port, limits, windows, faults, fixtures;
                                 see Profiles/staging/README.md); unknown keys are errors
          --trust-forwarded-for  take the client IP from X-Forwarded-For
          --ledger-file PATH     stream the ledger to PATH as JSON lines (one entry per line)
                                 instead of keeping it in memory; GET /__admin/ledger pages it
          -h, --help             this help
        """

    package static let compareUsage = """
        USAGE: optolink-soak compare BASELINE CURRENT [options]

        Compares two report directories of the same profile (e.g. the last release and the
        release candidate): per endpoint counts, 429 and failure rates, attempt and call latency
        p50/p95/p99 with a Mann–Whitney U test on the histograms; per verdict the counts that
        changed. Writes compare.md (for a pull request), compare.json and report.html.

        Regression: the current profile's expect.regression rules when it has them
        ("match.call_latency.p95 < baseline * 1.10"), else the default rule (printed): a latency
        shift significant at p < 0.01 that is also > 10 % and > 5 ms; any verdict count worse.
        A latency shift while the soak process itself was slowed (start lag p99 > 2× and > +2 ms)
        is inconclusive (exit 2): the machine was busier, re-run both on a quiet machine.

        OPTIONS:
          --out DIR          where the files go (default CURRENT/compare/)
          --force            compare even when the profiles differ (noted in the output)
          --allow-partial    compare even when a run did not run its course (noted in the output)
          --junit FILE       also write one JUnit test case per check
          --alpha P          default rule: significance level (default 0.01)
          --min-shift PCT    default rule: relative latency change, e.g. 10% (default 10%)
          --floor DURATION   default rule: absolute latency change, e.g. 5ms (default 5ms)
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

    package static let mergeUsage = """
        USAGE: optolink-soak merge DIR... --out DIR [options]

        Merges the reports of one plan's shards (each written by `run PROFILE --shard I/N`) into
        the report a single process running the whole plan would have written: counts add,
        latency histograms merge exactly from their bucket counts (each percentile within the
        histogram's 1 % precision of the union of samples), every verdict is re-run on the union
        of the shards' attempts and calls in time order (a per-IP or per-key limit window spans
        shards), and the profile's thresholds are judged on the merged result. Writes
        summary.json, summary.txt, report.html and profile.json into --out.

        Refuses shards of different plans (profile hash), a shard given twice, and a missing
        shard unless --allow-partial.

        OPTIONS:
          --out DIR          where the merged report goes (required)
          --allow-partial    merge even when shards are missing; the report names them
          --force            write into an --out directory that already holds a report
          --ledger FILE      server ledger exported from the real backend (a JSON array, or JSON
                             lines: one entry per line), for the reconciliation verdict
          --junit FILE       also write thresholds and verdicts as JUnit XML to FILE
          --threshold EXPR   judge this threshold too (repeatable), e.g.
                             --threshold 'limits.match.too_lenient == 0'
          --no-thresholds    leave out the profile's thresholds (--threshold ones still apply)
          -h, --help         this help

        Exit codes: 0 thresholds passed · 1 a threshold failed · 2 could not merge (refused,
        unreadable shard, or a shard's report is incomplete).
        """

    package static let benchUsage = """
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

    /// Parses `arguments` (without the executable name).
    /// - Throws: ``SoakUsageError`` naming the flag and the problem.
    package static func parse(_ arguments: [String]) throws -> SoakCommand {
        guard let first = arguments.first else { return .help(usage) }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "-h", "--help", "help": return .help(usage)
        case "--version", "-V", "version": return .version
        case "run": return try parseRun(rest)
        case "serve": return try parseServe(rest)
        case "bench": return try parseBench(rest)
        case "compare": return try parseCompare(rest)
        case "merge": return try parseMerge(rest)
        case "capacity": return try CapacityCommand.parse(rest)
        default:
            throw SoakUsageError(
                message: "unknown command \"\(first)\" (expected run, serve, bench, compare, merge, capacity, "
                    + "--help, --version)")
        }
    }

    /// Walks `--flag value` pairs, calling `handle(flag, next)`; `next()` takes the value.
    static func walk(
        _ args: [String], positional: (String) throws -> Void,
        _ handle: (String, () throws -> String) throws -> Bool
    ) throws -> Bool {
        var i = 0
        while i < args.count {
            let arg = args[i]
            if arg == "-h" || arg == "--help" { return true }
            if arg.hasPrefix("-") {
                var flag = arg
                var inline: String? = nil
                if let eq = arg.firstIndex(of: "="), arg.hasPrefix("--") {
                    flag = String(arg[..<eq])
                    inline = String(arg[arg.index(after: eq)...])
                }
                var consumed = false
                let next: () throws -> String = {
                    if let inline { return inline }
                    guard i + 1 < args.count, !looksLikeFlag(args[i + 1]) else {
                        throw SoakUsageError(message: "\(flag): needs a value")
                    }
                    consumed = true
                    return args[i + 1]
                }
                guard try handle(flag, next) else { throw SoakUsageError(message: "\(flag): unknown option") }
                i += consumed ? 2 : 1
            } else {
                try positional(arg)
                i += 1
            }
        }
        return false
    }

    /// `--out`, `-h`: an option, not a value (`-1` is a value, so `number` can reject it by name).
    private static func looksLikeFlag(_ text: String) -> Bool {
        text.hasPrefix("--") || (text.count >= 2 && text.hasPrefix("-") && text.dropFirst().first?.isLetter == true)
    }

    static func number<T: LosslessStringConvertible & Comparable>(
        _ flag: String, _ text: String, _ range: ClosedRange<T>, _ what: String
    ) throws -> T {
        guard let value = T(text), range.contains(value) else {
            throw SoakUsageError(message: "\(flag): \"\(text)\" is not \(what)")
        }
        return value
    }

    private static func parseRun(_ args: [String]) throws -> SoakCommand {
        var options = SoakRunOptions(profilePath: "")
        var profile: String? = nil
        let wantsHelp = try walk(
            args,
            positional: { arg in
                guard profile == nil else { throw SoakUsageError(message: "run: unexpected argument \"\(arg)\"") }
                profile = arg
            }
        ) { flag, value in
            switch flag {
            case "--base-url":
                let text = try value()
                guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme),
                    url.host != nil
                else { throw SoakUsageError(message: "--base-url: \"\(text)\" is not an http(s) URL") }
                options.baseURL = url
            case "--api-key": options.apiKey = try value()
            case "--org-key": options.orgKey = try value()
            case "--devices": options.devices = try number(flag, value(), 1...1_000_000, "a device count (1…1000000)")
            case "--duration": options.duration = try number(flag, value(), 0.001...604_800.0, "seconds (0.001…604800)")
            case "--rate":
                options.rate = try number(flag, value(), 0.0...100_000.0, "journeys/s (0…100000)")
                if options.rate == 0 {
                    throw SoakUsageError(message: "--rate: must be > 0 journeys/s (0 would start nothing)")
                }
            case "--seed": options.seed = try number(flag, value(), 0...UInt64.max, "an unsigned integer")
            case "--out": options.outDirectory = try value()
            case "--force": options.force = true
            case "--ledger": options.ledgerPath = try value()
            case "--ledger-file": options.ledgerFilePath = try value()
            case "--no-progress": options.progress = false
            case "--threshold": options.extraThresholds.append(try value())
            case "--no-thresholds": options.noThresholds = true
            case "--junit": options.junitPath = try value()
            case "--baseline": options.baselineDirectory = try value()
            case "--metrics-listen": options.metricsListen = try MetricsListenAddress(parsing: value())
            case "--transport":
                let text = try value()
                guard let kind = SoakTransportKind(rawValue: text) else {
                    throw SoakUsageError(message: "--transport: \"\(text)\" is not native or urlsession")
                }
                options.transport = kind
            case "--pool":
                let text = try value()
                guard let mode = HTTPClient.PoolMode(rawValue: text) else {
                    throw SoakUsageError(message: "--pool: \"\(text)\" is not shared or per-device")
                }
                options.pool = mode
            case "--connections":
                options.connections = try number(flag, value(), 1...65_536, "a connection count (1…65536)")
            case "--client-loops":
                options.clientLoops = try number(flag, value(), 1...256, "a thread count (1…256)")
            case "--cacert": options.tls.additionalTrustFile = try value()
            case "--insecure": options.tls.verifiesPeer = false
            case "--shard": options.shard = try SoakShard(parsing: value())
            case "--start-at":
                options.startAt = try number(
                    flag, value(), 1_000_000_000.0...10_000_000_000.0, "a Unix time in seconds")
            case "--run-id":
                let text = try value()
                let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
                guard (1...64).contains(text.count), text.allSatisfy(allowed.contains) else {
                    throw SoakUsageError(
                        message:
                            "--run-id: \"\(text)\" is not 1…64 letters, digits, - or _ (it prefixes correlation ids)")
                }
                options.runId = text
            case "--processes": options.processes = try number(flag, value(), 1...256, "a process count (1…256)")
            case "--local-ips":
                let text = try value()
                do { _ = try LocalAddressPool.parse(text) } catch { throw SoakUsageError(message: "\(error)") }
                options.localIPs = text
            case "--forwarded-for": options.forwardedFor = true
            case "--header":
                let header = try SoakExtraHeader.parse(value())
                if options.headers.contains(where: { $0.name.caseInsensitiveCompare(header.name) == .orderedSame }) {
                    throw SoakUsageError(message: "--header \(header.name): given twice")
                }
                options.headers.append(header)
            default: return false
            }
            return true
        }
        if wantsHelp { return .help(runUsage) }
        guard let profile else { throw SoakUsageError(message: "run: missing PROFILE (a profile JSON file)") }
        options.profilePath = profile
        if options.baseURL == nil && (options.apiKey != nil || options.orgKey != nil) {
            throw SoakUsageError(
                message: "--api-key/--org-key: only with --base-url (the embedded emulator uses its fixtures)")
        }
        if options.baseURL != nil && options.ledgerFilePath != nil {
            throw SoakUsageError(
                message: "--ledger-file: only with the embedded emulator (a remote backend's ledger: --ledger FILE)")
        }
        if options.baseURL == nil && options.ledgerPath != nil {
            throw SoakUsageError(
                message: "--ledger: only with --base-url (the embedded emulator's ledger is read directly)")
        }
        if let shard = options.shard {
            if options.processes != nil {
                throw SoakUsageError(
                    message: "--shard and --processes: choose one (--processes starts the shards itself)")
            }
            if options.baseURL == nil {
                throw SoakUsageError(
                    message: "--shard \(shard): needs --base-url. Every shard must drive one shared backend; an "
                        + "embedded emulator per shard would split the rate-limit windows and the ledger, so limits "
                        + "could not be judged on the whole (on one machine use --processes P)")
            }
        }
        if options.processes != nil && (options.metricsListen != nil || options.baselineDirectory != nil) {
            throw SoakUsageError(
                message: "--processes: --metrics-listen and --baseline are not supported with it yet (run `compare` "
                    + "on the merged report)")
        }
        return .run(options)
    }

    private static func parseServe(_ args: [String]) throws -> SoakCommand {
        var options = SoakCommand.ServeOptions()
        let wantsHelp = try walk(
            args, positional: { throw SoakUsageError(message: "serve: unexpected argument \"\($0)\"") }
        ) {
            flag, value in
            switch flag {
            case "--port": options.port = try number(flag, value(), 0...65535, "a port (0…65535)")
            case "--host": options.host = try value()
            case "--config": options.configPath = try value()
            case "--trust-forwarded-for": options.trustForwardedFor = true
            case "--ledger-file": options.ledgerFilePath = try value()
            default: return false
            }
            return true
        }
        return wantsHelp ? .help(serveUsage) : .serve(options)
    }

    private static func parseCompare(_ args: [String]) throws -> SoakCommand {
        var paths: [String] = []
        var options = CompareOptions(baselinePath: "", currentPath: "")
        let wantsHelp = try walk(
            args,
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
            case "--alpha": options.rules.alpha = try number(flag, value(), 1e-9...0.5, "a significance level (0…0.5)")
            case "--min-shift":
                let text = try value()
                guard let fraction = Thresholds.parseValue(text), text.hasSuffix("%"), (0...10).contains(fraction)
                else {
                    throw SoakUsageError(message: "--min-shift: \"\(text)\" is not a percentage like 10%")
                }
                options.rules.minRelative = fraction
            case "--floor":
                let text = try value()
                guard text.hasSuffix("s"), let seconds = Thresholds.parseValue(text), (0...3600).contains(seconds)
                else {
                    throw SoakUsageError(message: "--floor: \"\(text)\" is not a duration like 5ms or 0.01s")
                }
                options.rules.minAbsoluteSeconds = seconds
            default: return false
            }
            return true
        }
        if wantsHelp { return .help(compareUsage) }
        guard paths.count == 2 else {
            throw SoakUsageError(message: "compare: needs BASELINE and CURRENT report directories")
        }
        options.baselinePath = paths[0]
        options.currentPath = paths[1]
        return .compare(options)
    }

    private static func parseMerge(_ args: [String]) throws -> SoakCommand {
        var options = MergeOptions(directories: [])
        let wantsHelp = try walk(args, positional: { options.directories.append($0) }) { flag, value in
            switch flag {
            case "--out": options.outDirectory = try value()
            case "--allow-partial": options.allowPartial = true
            case "--force": options.force = true
            case "--ledger": options.ledgerPath = try value()
            case "--junit": options.junitPath = try value()
            case "--threshold": options.extraThresholds.append(try value())
            case "--no-thresholds": options.noThresholds = true
            default: return false
            }
            return true
        }
        if wantsHelp { return .help(mergeUsage) }
        guard !options.directories.isEmpty else {
            throw SoakUsageError(message: "merge: needs the shards' report directories (DIR...)")
        }
        guard options.outDirectory != nil else {
            throw SoakUsageError(message: "merge: --out DIR is required (where the merged report goes)")
        }
        return .merge(options)
    }

    private static func parseBench(_ args: [String]) throws -> SoakCommand {
        var options = SoakCommand.BenchOptions()
        let wantsHelp = try walk(
            args, positional: { throw SoakUsageError(message: "bench: unexpected argument \"\($0)\"") }
        ) {
            flag, value in
            switch flag {
            case "--out": options.outPath = try value()
            case "--devices":
                let text = try value()
                let counts = text.split(separator: ",").compactMap { Int($0) }
                guard counts.count == 2, counts.allSatisfy({ (1...200_000).contains($0) }), counts[0] < counts[1] else {
                    throw SoakUsageError(message: "--devices: \"\(text)\" is not two increasing counts like 1000,10000")
                }
                options.deviceCounts = counts
            case "--rate": options.lagRate = try number(flag, value(), 1.0...100_000.0, "journeys/s (1…100000)")
            case "--seconds": options.seconds = try number(flag, value(), 0.5...600.0, "seconds (0.5…600)")
            case "--transport":
                let text = try value()
                guard let kind = SoakTransportKind(rawValue: text) else {
                    throw SoakUsageError(message: "--transport: \"\(text)\" is not native or urlsession")
                }
                options.transport = kind
            default: return false
            }
            return true
        }
        return wantsHelp ? .help(benchUsage) : .bench(options)
    }
}
