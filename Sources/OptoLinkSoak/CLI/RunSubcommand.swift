import Foundation
import OptoLinkHTTP

/// `optolink-soak run PROFILE [options]`: replay a profile (``SoakRun``), or run it as shard
/// processes (``ProcessesRun``) with `--processes`.
package struct RunSubcommand: SoakSubcommand {
    package static let name = "run"
    package static let synopsis = (
        arguments: "PROFILE [options]", purpose: "replay a profile with thousands of virtual devices"
    )

    /// The profile and the flags that override it.
    package var options: SoakRunOptions

    package static let usage = """
        USAGE: optolink-soak run PROFILE [options]

        Replays PROFILE (JSON, see Profiles/README.md). Without --base-url the embedded
        staging emulator is started on 127.0.0.1 with the profile's backend section.

        OPTIONS:
          --base-url URL       drive a real staging backend instead of the embedded emulator
          --api-key KEY        CLIENT API key (overrides the profile's sdk.apiKey); visible in the
                               process list, so prefer --api-key-file or OPTOLINK_API_KEY (SECRETS)
          --api-key-file FILE  read the CLIENT API key from FILE (its one line)
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
                               if it cannot be read then, the report is written and the exit is 2.
                               A remote emulator's http(s)://HOST/__admin/ledger is read page by
                               page up to the run's end (with --admin-token-file if it is locked)
          --ledger-wait SECONDS
                               with --ledger: wait up to SECONDS (default 5) for the file to hold
                               a row at or after the run's last successful write, then until it
                               has not grown for 1 s (rows written out of order); one that stops
                               growing for half of SECONDS ends the wait sooner. Calls past its
                               last row are then reported as not covered, never as lost
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
          --header-file FILE   --header lines from FILE: one 'Name: value' a line; blank lines and
                               lines starting with # are skipped
          --admin-token-file FILE
                               the emulator's admin token, sent as Authorization: Bearer to its
                               /__admin/* routes (else OPTOLINK_ADMIN_TOKEN)
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
                               shard.json beside the usual report; combine with `merge`. A
                               shard judges only its own health (exit 0 when healthy); merge
                               judges the profile's thresholds on the whole
          --start-at EPOCH     start the plan's second 0 at this Unix time (seconds), the same
                               for every shard; a shard that starts later says so and its
                               missed arrivals count as late starts
          --run-id ID          the run id (prefix of every correlation id); give every shard the same
        """ + SecretSources.runHelp

    package init(options: SoakRunOptions) { self.options = options }

    package init(arguments: [String]) throws {
        var options = SoakRunOptions(profilePath: "")
        var files = RunSecretFiles()
        var profile: String? = nil
        try FlagParser.walk(
            arguments,
            positional: { arg in
                guard profile == nil else { throw SoakUsageError(message: "run: unexpected argument \"\(arg)\"") }
                profile = arg
            }
        ) { flag, value in
            switch flag {
            case "--api-key-file": files.apiKey = try value()
            case "--header-file": files.headers = try value()
            case "--admin-token-file": files.adminToken = try value()
            default: return try Self.set(flag, value, on: &options)
            }
            return true
        }
        guard let profile else { throw SoakUsageError(message: "run: missing PROFILE (a profile JSON file)") }
        options.profilePath = profile
        try SecretSources.resolve(&options, files: files, environment: ProcessInfo.processInfo.environment)
        try Self.check(options)
        self.options = options
    }

    /// Sets `flag` (its value from `value()`) on `options`; `false` for a flag `run` does not know.
    private static func set(
        _ flag: String, _ value: () throws -> String, on options: inout SoakRunOptions
    ) throws -> Bool {
        switch flag {
        case "--base-url": options.baseURL = try baseURL(value())
        case "--api-key":
            options.apiKey = try value()
            options.apiKeyOnCommandLine = true
        case "--org-key": options.orgKey = try value()
        case "--devices":
            options.devices = try FlagParser.number(flag, value(), 1...1_000_000, "a device count (1…1000000)")
        case "--duration":
            options.duration = try FlagParser.number(flag, value(), 0.001...604_800.0, "seconds (0.001…604800)")
        case "--rate":
            options.rate = try FlagParser.number(flag, value(), 0.0...100_000.0, "journeys/s (0…100000)")
            if options.rate == 0 {
                throw SoakUsageError(message: "--rate: must be > 0 journeys/s (0 would start nothing)")
            }
        case "--seed": options.seed = try FlagParser.number(flag, value(), 0...UInt64.max, "an unsigned integer")
        case "--out": options.outDirectory = try value()
        case "--force": options.force = true
        case "--ledger": options.ledgerPath = try value()
        case "--ledger-file": options.ledgerFilePath = try value()
        case "--ledger-wait":
            options.ledgerWaitSeconds = try FlagParser.number(flag, value(), 0.0...3600.0, "seconds (0…3600)")
        case "--no-progress": options.progress = false
        case "--threshold": options.extraThresholds.append(try value())
        case "--no-thresholds": options.noThresholds = true
        case "--junit": options.junitPath = try value()
        case "--baseline": options.baselineDirectory = try value()
        case "--metrics-listen": options.metricsListen = try MetricsListenAddress(parsing: value())
        case "--transport": options.transport = try FlagParser.transport(value())
        case "--pool":
            let text = try value()
            guard let mode = HTTPClient.PoolMode(rawValue: text) else {
                throw SoakUsageError(message: "--pool: \"\(text)\" is not shared or per-device")
            }
            options.pool = mode
        case "--connections":
            options.connections = try FlagParser.number(flag, value(), 1...65_536, "a connection count (1…65536)")
        case "--client-loops":
            options.clientLoops = try FlagParser.number(flag, value(), 1...256, "a thread count (1…256)")
        case "--cacert": options.tls.additionalTrustFile = try value()
        case "--insecure": options.tls.verifiesPeer = false
        case "--shard": options.shard = try SoakShard(parsing: value())
        case "--start-at":
            options.startAt = try FlagParser.number(
                flag, value(), 1_000_000_000.0...10_000_000_000.0, "a Unix time in seconds")
        case "--run-id": options.runId = try runId(value())
        case "--processes":
            options.processes = try FlagParser.number(flag, value(), 1...256, "a process count (1…256)")
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
            options.headerOnCommandLine = true
        default: return false
        }
        return true
    }

    /// `--base-url URL`: an http(s) URL with a host.
    private static func baseURL(_ text: String) throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme),
            url.host != nil
        else { throw SoakUsageError(message: "--base-url: \"\(text)\" is not an http(s) URL") }
        return url
    }

    /// `--run-id ID`: 1…64 letters, digits, `-` or `_`.
    private static func runId(_ text: String) throws -> String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
        guard (1...64).contains(text.count), text.allSatisfy(allowed.contains) else {
            throw SoakUsageError(
                message: "--run-id: \"\(text)\" is not 1…64 letters, digits, - or _ (it prefixes correlation ids)")
        }
        return text
    }

    /// Refuses flags that do not go together.
    private static func check(_ options: SoakRunOptions) throws {
        if options.baseURL == nil && (options.apiKey != nil || options.orgKey != nil) {
            throw SoakUsageError(
                message: "--api-key/--org-key: only with --base-url (the embedded emulator uses its fixtures)")
        }
        if options.baseURL != nil && options.ledgerFilePath != nil {
            throw SoakUsageError(
                message: "--ledger-file: only with the embedded emulator (a remote backend's ledger: --ledger FILE)")
        }
        if options.ledgerPath == nil && options.ledgerWaitSeconds != SoakRunOptions.defaultLedgerWaitSeconds {
            throw SoakUsageError(message: "--ledger-wait: only with --ledger FILE (it bounds the wait for that file)")
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
    }

    /// Runs the profile with SIGINT and SIGTERM trapped: each stops new work, lets in-flight calls
    /// finish within the grace period and writes the report; the exit code says which (130 / 143).
    /// A second signal ends the grace period at once (the report is still written).
    package func execute() async -> Int32 {
        for note in SecretSources.commandLineNotes(options) {
            FileHandle.standardError.write(Data((note + "\n").utf8))
        }
        let run = SoakRun(options: options)
        let control = run.control
        let requests = run.stopRequests
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
        let result: SoakRunResult
        if options.processes != nil {
            // The shards run in child processes; a signal here is passed on to each of them.
            result = await ProcessesRun(options: options, control: control).execute()
        } else {
            result = await run.execute()
        }
        if let directory = result.directory { print(directory.path) }
        return result.exitCode
    }
}
