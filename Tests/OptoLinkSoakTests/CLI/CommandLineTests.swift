import Foundation
import Testing

import OptoLinkSoak
import SoakVerdicts

@Suite("Command line")
struct CommandLineTests {
    @Test("run with every flag")
    func runFlags() throws {
        let command = try SoakCommandLine.parse([
            "run", "Profiles/smoke.json", "--base-url", "http://127.0.0.1:9", "--api-key", "k", "--org-key", "o",
            "--devices", "10", "--duration=30", "--rate", "5.5", "--seed", "7", "--out", "/tmp/x", "--ledger", "l.json",
        ])
        guard let o = command.subcommand(RunSubcommand.self)?.options else {
            Issue.record("not a run: \(command)")
            return
        }
        #expect(o.profilePath == "Profiles/smoke.json")
        #expect(o.baseURL?.absoluteString == "http://127.0.0.1:9")
        #expect(o.apiKey == "k" && o.orgKey == "o")
        #expect(o.devices == 10 && o.duration == 30 && o.rate == 5.5 && o.seed == 7)
        #expect(o.outDirectory == "/tmp/x" && o.ledgerPath == "l.json")
    }

    @Test(
        "bad flags name the flag",
        arguments: [
            (["run"], "run: missing PROFILE (a profile JSON file)"),
            (["run", "p.json", "--devices", "ten"], "--devices: \"ten\" is not a device count (1…1000000)"),
            (["run", "p.json", "--devices"], "--devices: needs a value"),
            (["run", "p.json", "--frobnicate"], "--frobnicate: unknown option"),
            (["run", "p.json", "--base-url", "ftp://x"], "--base-url: \"ftp://x\" is not an http(s) URL"),
            (
                ["run", "p.json", "--api-key", "k"],
                "--api-key/--org-key: only with --base-url (the embedded emulator uses its fixtures)"
            ),
            (["run", "p.json", "--duration", "--out", "x"], "--duration: needs a value"),
            (["run", "p.json", "--seed", "-h"], "--seed: needs a value"),
            (["run", "p.json", "--seed", "-1"], "--seed: \"-1\" is not an unsigned integer"),
            (["run", "p.json", "--rate", "0"], "--rate: must be > 0 journeys/s (0 would start nothing)"),
            (["serve", "--port", "70000"], "--port: \"70000\" is not a port (0…65535)"),
            (
                ["launch"],
                "unknown command \"launch\" (expected run, serve, bench, compare, merge, capacity, --help, --version)"
            ),
        ])
    func badFlags(arguments: [String], message: String) {
        #expect(throws: SoakUsageError(message: message)) { try SoakCommandLine.parse(arguments) }
    }

    @Test("--help on every subcommand and --version")
    func help() throws {
        #expect(try SoakCommandLine.parse(["run", "--help"]) == .help(RunSubcommand.usage))
        #expect(try SoakCommandLine.parse(["serve", "-h"]) == .help(ServeSubcommand.usage))
        #expect(try SoakCommandLine.parse(["bench", "--help"]) == .help(BenchSubcommand.usage))
        #expect(try SoakCommandLine.parse(["merge", "--help"]) == .help(MergeSubcommand.usage))
        #expect(try SoakCommandLine.parse(["--help"]) == .help(SoakCommandLine.usage))
        #expect(try SoakCommandLine.parse(["--version"]) == .version)
        guard
            let s = try SoakCommandLine.parse(["serve", "--port", "0", "--trust-forwarded-for"]).subcommand(
                ServeSubcommand.self)?.options
        else {
            Issue.record("not serve")
            return
        }
        #expect(s.port == 0 && s.trustForwardedFor)
    }

    @Test("bad usage exits 2 through the library entry point")
    func exitCode() async {
        #expect(await OptoLinkSoak.main(["run", "--devices", "x"]) == 2)
        #expect(await OptoLinkSoak.main(["--version"]) == 0)
        #expect(await OptoLinkSoak.main([]) == 2)
    }

    @Test("run --help says what --duration bounds and how --devices meets iterations")
    func runHelpExplains() {
        let help = RunSubcommand.usage
        #expect(help.contains("no journey or step starts after it"))
        #expect(help.contains("load.grace"))
        #expect(help.contains("load.iterations is a total of journeys"))
        #expect(SoakCommandLine.usage.contains("143"))
    }
}

@Suite("Command line: thresholds, JUnit, baseline, metrics")
struct CommandLineReportFlagTests {
    @Test("--threshold is repeatable and adds to the profile's; --no-thresholds drops the profile's")
    func thresholdFlags() throws {
        guard
            let options = try SoakCommandLine.parse([
                "run", "p.json", "--threshold", "match.call_latency.p95 < 300ms", "--threshold=backoff.early == 0",
                "--junit", "j.xml", "--baseline", "Reports/old", "--metrics-listen", "[::1]:0",
            ]).subcommand(RunSubcommand.self)?.options
        else {
            Issue.record("not a run")
            return
        }
        #expect(options.extraThresholds == ["match.call_latency.p95 < 300ms", "backoff.early == 0"])
        #expect(options.junitPath == "j.xml" && options.baselineDirectory == "Reports/old")
        #expect(options.metricsListen == MetricsListenAddress(host: "::1", port: 0))
        var profile = try SoakProfile.load(contentsOf: URL(fileURLWithPath: "Profiles/smoke.json"))
        let own = profile.expect.thresholds
        #expect(!own.isEmpty)
        #expect(
            try options.apply(to: profile).expect.thresholds == own + options.extraThresholds.map { ThresholdSpec($0) })
        var none = options
        none.noThresholds = true
        #expect(try none.apply(to: profile).expect.thresholds == options.extraThresholds.map { ThresholdSpec($0) })
        none.extraThresholds = []
        profile = try none.apply(to: profile)
        #expect(profile.expect.thresholds.isEmpty)
    }

    @Test(
        "a bad --threshold is refused before the run, naming the flag and the expression",
        arguments: [
            ("match.call_latncy.p95 < 1s", "did you mean match.call_latency.p95?"),
            ("backoff.early 0", "no operator"),
            ("http.requests > lots", "bad value 'lots'"),
        ])
    func badThreshold(expression: String, fragment: String) throws {
        var options = SoakRunOptions(profilePath: "p.json")
        options.extraThresholds = [expression]
        let profile = try SoakProfile.load(contentsOf: URL(fileURLWithPath: "Profiles/smoke.json"))
        #expect {
            try options.apply(to: profile)
        } throws: { error in
            let text = "\(error)"
            return text.contains("--threshold '\(expression)'") && text.contains(fragment)
        }
    }

    /// A closed model with more concurrent devices than devices (1,000,000 workers on 3 devices
    /// ran 12 minutes past its 2 s duration, ignored SIGTERM and grew past 2.6 GB) is refused
    /// before the run, whether the profile or `--devices` makes it so.
    @Test func closedConcurrencyAboveTheDevicesIsRefused() throws {
        var profile = try SoakProfile.load(contentsOf: URL(fileURLWithPath: "Profiles/smoke.json"))
        profile.load = LoadSettings(model: .closed, concurrency: 1_000_000, duration: 2, grace: 1)
        profile.devices.count = 3
        let options = SoakRunOptions(profilePath: "p.json")
        #expect {
            try options.apply(to: profile)
        } throws: { error in
            "\(error)".contains("load.concurrency 1000000 is more than the 3 devices")
        }
        var more = options
        more.devices = 1_000_000
        #expect(try more.apply(to: profile).load.concurrency == 1_000_000)
        var fewer = options
        fewer.devices = 2
        profile.load.concurrency = 3
        profile.devices.count = 10
        #expect(throws: SoakProfileError.self) { try fewer.apply(to: profile) }
        #expect(try options.apply(to: profile).devices.count == 10)
    }

    @Test(
        "--metrics-listen takes loopback HOST:PORT only",
        arguments: [
            ("0.0.0.0:9464", "is not loopback"), ("127.0.0.1", "is not HOST:PORT"),
            ("127.0.0.1:70000", "is not HOST:PORT"),
            ("example.com:80", "is not loopback"), ("127.0.0.1:x", "is not HOST:PORT"),
        ])
    func metricsListen(text: String, fragment: String) {
        #expect {
            try SoakCommandLine.parse(["run", "p.json", "--metrics-listen", text])
        } throws: { error in
            "\(error)".hasPrefix("--metrics-listen:") && "\(error)".contains(fragment)
        }
        #expect((try? MetricsListenAddress(parsing: "localhost:9464")) == .init(host: "127.0.0.1", port: 9464))
    }
}

@Suite("Command line: compare")
struct CompareCommandLineTests {
    @Test("compare takes two directories and the default rule's settings")
    func parses() throws {
        guard
            let o = try SoakCommandLine.parse([
                "compare", "a", "b", "--out", "o", "--force", "--junit", "j.xml", "--alpha", "0.05", "--min-shift",
                "20%",
                "--floor=2ms",
            ]).subcommand(CompareSubcommand.self)?.options
        else {
            Issue.record("not a compare")
            return
        }
        #expect(o.baselinePath == "a" && o.currentPath == "b" && o.outDirectory == "o" && o.force)
        #expect(o.junitPath == "j.xml" && o.rules.alpha == 0.05 && o.rules.minRelative == 0.2)
        #expect(abs(o.rules.minAbsoluteSeconds - 0.002) < 1e-12)
    }

    @Test(
        "bad compare arguments name the flag",
        arguments: [
            (["compare", "a"], "compare: needs BASELINE and CURRENT report directories"),
            (["compare", "a", "b", "c"], "compare: unexpected argument \"c\""),
            (["compare", "a", "b", "--alpha", "2"], "--alpha: \"2\" is not a significance level (0…0.5)"),
            (["compare", "a", "b", "--min-shift", "0.1"], "--min-shift: \"0.1\" is not a percentage like 10%"),
            (["compare", "a", "b", "--floor", "5"], "--floor: \"5\" is not a duration like 5ms or 0.01s"),
            (["compare", "a", "b", "--frob"], "--frob: unknown option"),
        ])
    func refuses(arguments: [String], message: String) {
        #expect(throws: SoakUsageError(message: message)) { try SoakCommandLine.parse(arguments) }
    }
}
