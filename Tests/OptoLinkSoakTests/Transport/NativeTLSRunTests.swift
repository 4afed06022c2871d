import Foundation
import OptoLinkHTTP
import Testing

import OptoLinkSoak

/// `run` against `https://` on the native transport: the TLS flags, what the report says about
/// verification, and the pre-flight probe that stops a run whose handshake cannot succeed.
@Suite("Native TLS runs")
struct NativeTLSRunTests {
    @Test("--cacert and --insecure set the native transport's TLS and reach every shard process")
    func flags() throws {
        let args = ["run", "p.json", "--base-url", "https://127.0.0.1:9", "--cacert", "ca.pem", "--insecure"]
        guard let options = try SoakCommandLine.parse(args).subcommand(RunSubcommand.self)?.options else {
            Issue.record("not a run")
            return
        }
        #expect(options.tls == TLSConfiguration(verifiesPeer: false, additionalTrustFile: "ca.pem"))
        let shardArgs = ProcessesRun.shardArguments(
            options, shard: SoakShard(index: 0, count: 2), startAt: 1_800_000_000, runId: "abc",
            baseURL: URL(string: "https://127.0.0.1:9")!, out: URL(fileURLWithPath: "/r/shard-0"))
        guard let shard = try SoakCommandLine.parse(shardArgs).subcommand(RunSubcommand.self)?.options else {
            Issue.record("not a run: \(shardArgs)")
            return
        }
        #expect(shard.tls == options.tls)
        #expect(try SoakCommandLine.parse(["run", "p.json"]).runOptions?.tls == TLSConfiguration())
    }

    @Test("the report names how an https:// backend was verified, and says nothing for http://")
    func tlsNote() throws {
        let https = try #require(URL(string: "https://staging.example"))
        #expect(SoakRun.tlsNote(TLSConfiguration(), baseURL: https) == "verified")
        #expect(
            SoakRun.tlsNote(TLSConfiguration(additionalTrustFile: "ca.pem"), baseURL: https)
                == "verified (+ --cacert ca.pem)")
        #expect(SoakRun.tlsNote(TLSConfiguration(verifiesPeer: false), baseURL: https) == "NOT VERIFIED (--insecure)")
        let http = try #require(URL(string: "http://127.0.0.1:8080"))
        #expect(SoakRun.tlsNote(TLSConfiguration(verifiesPeer: false), baseURL: http) == nil)
    }

    #if os(Linux)
        @Test("an https:// base URL on a plain HTTP port exits 2 before the run, naming the cause and the fix")
        func handshakeFailureStopsTheRunUpFront() async throws {
            try await withHTTPServer(.init(), handler: { _, _ in .respond(HTTPResponse(status: 200)) }) { server in
                let e2e = try EndToEndRun(profile: e2eProfile(devices: 2, rate: 20, steps: #"{"kind": "firstLaunch"}"#))
                var run = e2e.makeRun { $0.baseURL = URL(string: "https://127.0.0.1:\(server.port)") }
                run.makeBackend = { _, options in RemoteBackend(baseURL: options.baseURL!, ledgerFile: nil) }
                let result = await run.execute()
                #expect(result.exitCode == 2)
                let error = result.error ?? ""
                #expect(
                    error.hasPrefix("TLS failed with backend https://127.0.0.1:\(server.port): protocol: "), "\(error)")
                #expect(error.contains("an http:// port needs an http:// --base-url"), "\(error)")
                #expect(
                    !FileManager.default.fileExists(
                        atPath: e2e.reportDirectory.appendingPathComponent("attempts.csv").path))
            }
        }
    #endif

    @Test("each kind of handshake failure names its fix", arguments: TLSFailure.Kind.allCases)
    func fixes(_ kind: TLSFailure.Kind) {
        let fix = NativeBackendProbe.fix(for: TLSFailure(kind, "r"))
        switch kind {
        case .unknownCA: #expect(fix.contains("--cacert FILE") && fix.contains("--insecure"))
        case .expired: #expect(fix.contains("renew") && fix.contains("--insecure"))
        case .hostnameMismatch: #expect(fix.contains("--base-url host") && fix.contains("--insecure"))
        case .protocol: #expect(fix.contains("TLS 1.2 or 1.3"))
        case .configuration: #expect(fix.contains("--cacert file") && fix.contains("libssl3"))
        }
    }
}

extension SoakCommand {
    fileprivate var runOptions: SoakRunOptions? {
        subcommand(RunSubcommand.self)?.options
    }
}
