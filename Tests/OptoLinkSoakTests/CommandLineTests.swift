import Foundation
import Testing

@testable import OptoLinkSoak

@Suite("Command line")
struct CommandLineTests {
    @Test("run with every flag")
    func runFlags() throws {
        let command = try SoakCommandLine.parse([
            "run", "Profiles/smoke.json", "--base-url", "http://127.0.0.1:9", "--api-key", "k", "--org-key", "o",
            "--devices", "10", "--duration=30", "--rate", "5.5", "--seed", "7", "--out", "/tmp/x", "--ledger", "l.json",
        ])
        guard case .run(let o) = command else {
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
            (["run", "p.json", "--api-key", "k"], "--api-key/--org-key: only with --base-url (the embedded emulator uses its fixtures)"),
            (["run", "p.json", "--duration", "--out", "x"], "--duration: needs a value"),
            (["run", "p.json", "--seed", "-h"], "--seed: needs a value"),
            (["run", "p.json", "--seed", "-1"], "--seed: \"-1\" is not an unsigned integer"),
            (["run", "p.json", "--rate", "0"], "--rate: must be > 0 journeys/s (0 would start nothing)"),
            (["serve", "--port", "70000"], "--port: \"70000\" is not a port (0…65535)"),
            (["launch"], "unknown command \"launch\" (expected run, serve, bench, --help, --version)"),
        ])
    func badFlags(arguments: [String], message: String) {
        #expect(throws: SoakUsageError(message: message)) { try SoakCommandLine.parse(arguments) }
    }

    @Test("--help on every subcommand and --version")
    func help() throws {
        #expect(try SoakCommandLine.parse(["run", "--help"]) == .help(SoakCommandLine.runUsage))
        #expect(try SoakCommandLine.parse(["serve", "-h"]) == .help(SoakCommandLine.serveUsage))
        #expect(try SoakCommandLine.parse(["bench", "--help"]) == .help(SoakCommandLine.benchUsage))
        #expect(try SoakCommandLine.parse(["--help"]) == .help(SoakCommandLine.usage))
        #expect(try SoakCommandLine.parse(["--version"]) == .version)
        guard case .serve(let s) = try SoakCommandLine.parse(["serve", "--port", "0", "--trust-forwarded-for"]) else {
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
        let help = SoakCommandLine.runUsage
        #expect(help.contains("no journey or step starts after it"))
        #expect(help.contains("load.grace"))
        #expect(help.contains("load.iterations is a total of journeys"))
        #expect(SoakCommandLine.usage.contains("143"))
    }
}
