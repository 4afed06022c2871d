import Foundation
import OptoLinkStaging
import SoakSupport
import Testing

import OptoLinkSoak
import SoakVerdicts

/// A run against an emulator whose admin door is locked: with the token, the run's
/// `GET /__admin/peer` check passes and the run reconciles as against an open one.
@Suite(.timeLimit(.minutes(2)))
struct LockedServeRunTests {
    static let token = "adm-locked-serve-0042"

    /// 6 devices on their own loopback addresses; a launch and two events each.
    static let profile = """
        {"name": "locked", "seed": 4, "devices": {"count": 6},
         "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}, {"kind": "event", "name": "e", "repeat": 2}]}],
         "load": {"model": "closed", "concurrency": 6, "iterations": 6, "grace": 30},
         "sdk": {"timeout": 5}}
        """

    /// A remote backend whose ledger is the locked emulator's, exported to `file` at the end of
    /// the run (as `GET /__admin/ledger` with the token would be).
    struct ExportingBackend: SoakBackend {
        let server: StagingServer
        let file: URL
        var baseURL: URL { server.baseURL }
        var kind: String { "remote" }
        func ledger() async throws -> [LedgerRow]? {
            try server.writeLedger(to: file)
            return try await RemoteBackend(baseURL: baseURL, ledgerFile: file).ledger()
        }
        func counters() async -> JSONValue? { nil }
        func stop() async {}
    }

    func run(token: String?) async throws -> (EndToEndRun, SoakRunResult, StagingServer) {
        let server = StagingServer(configuration: StagingConfiguration(), adminToken: Self.token)
        try await server.start()
        let e2e = try EndToEndRun(profile: Self.profile)
        let ledger = e2e.directory.appendingPathComponent("exported-ledger.json")
        var run = e2e.makeRun {
            $0.baseURL = server.baseURL
            $0.localIPs = "127.0.0.2-127.0.0.7"
            $0.adminToken = token
            $0.ledgerPath = ledger.path
        }
        run.makeBackend = { _, _ in ExportingBackend(server: server, file: ledger) }
        let result = await run.execute()
        await server.stop()
        return (e2e, result, server)
    }

    @Test("with the token the peer check passes and the run reconciles; without it the check is refused")
    func runAgainstALockedEmulator() async throws {
        let (e2e, result, server) = try await run(token: Self.token)
        #expect(result.exitCode == 0, "\(e2e.log)")
        #expect(
            e2e.log.contains("source addresses: the server saw 6 distinct of 6 planned (GET /__admin/peer)"),
            "\(e2e.log)")
        let reconciliation = try #require(result.summary?.verdicts?.reconciliation)
        #expect(reconciliation.available)
        let events = try #require(reconciliation.endpoints["events"])
        #expect(events.calls == 12 && events.deliveredOnce == 12 && events.lost == 0 && events.duplicated == 0)
        #expect(server.counters().endpoints.isEmpty == false)

        let (refusedRun, refused, _) = try await run(token: nil)
        #expect(refused.exitCode == 0, "\(refusedRun.log)")
        #expect(refusedRun.log.contains { $0.hasPrefix("source addresses: server view not checked") })
    }
}
