import Foundation
import OptoLinkHTTP
import OptoLinkStaging
import SoakSupport
import Testing

@testable import OptoLinkSoak

/// `run --ledger http://…/__admin/ledger`: a remote emulator's ledger read over its admin route,
/// page by page and up to the run's end.
@Suite(.timeLimit(.minutes(2)))
struct AdminLedgerReaderTests {
    static let token = "adm-ledger-reader-0042"

    @Test("a run reads a locked remote emulator's ledger route and reconciles every call")
    func runReadsTheRoute() async throws {
        let e2e = try EndToEndRun(profile: LaggingLedgerRunTests.profile)
        let server = StagingServer(configuration: StagingConfiguration(), adminToken: Self.token)
        try await server.start()
        let route = server.baseURL.appendingPathComponent("__admin/ledger")
        var run = e2e.makeRun { options in
            (options.baseURL, options.adminToken) = (server.baseURL, Self.token)
            options.ledgerPath = route.absoluteString
        }
        run.makeBackend = { _, options in
            RemoteBackend(baseURL: server.baseURL, ledgerFile: options.ledgerPath.map { URL(fileURLWithPath: $0) })
        }
        let result = await run.execute()
        let before = try #require(result.summary?.run.startEpoch) - 1
        let now = Date().timeIntervalSince1970
        let all = server.ledger().count
        // The reader on its own: pages of 5, up to a time, and the token it needs.
        var paged = 0
        let read = try await AdminLedgerReader.read(
            route, until: now, adminToken: Self.token, tls: TLSConfiguration(), pageSize: 5
        ) { _ in paged += 1 }
        let none = try await AdminLedgerReader.read(
            route, until: before, adminToken: Self.token, tls: TLSConfiguration()
        ) { _ in }
        await #expect(throws: SoakProfileError.self) {
            try await AdminLedgerReader.read(route, until: now, adminToken: nil, tls: TLSConfiguration()) { _ in }
        }
        await server.stop()

        #expect(result.exitCode == 0, "\(e2e.log)")
        let reconciliation = try #require(result.summary?.verdicts?.reconciliation)
        let events = try #require(reconciliation.endpoints["events"])
        #expect(events.calls == 18 && events.deliveredOnce == 18 && events.lost == 0)
        #expect(reconciliation.incomplete == nil)
        #expect(all == 24 && read == all && paged == all)
        #expect(none == 0)
    }

    @Test("only http(s) URLs with a host are routes; merge refuses one")
    func urlsAndMerge() throws {
        #expect(AdminLedgerReader.url("http://127.0.0.1:8080/__admin/ledger") != nil)
        #expect(AdminLedgerReader.url("https://staging.example/__admin/ledger") != nil)
        #expect(AdminLedgerReader.url("ledger.jsonl") == nil)
        #expect(AdminLedgerReader.url("/tmp/ledger.jsonl") == nil)
        let fixture = try ShardFixture()
        defer { fixture.remove() }
        let shard = try fixture.write("s0", shard: SoakShard(index: 0, count: 1), profile: try ShardFixture.profile())
        var options = MergeOptions(directories: [shard])
        options.outDirectory = fixture.root.appendingPathComponent("merged").path
        options.ledgerPath = "http://127.0.0.1:1/__admin/ledger"
        let result = MergeCommand.run(options) { _ in }
        #expect(result.exitCode == 2)
        #expect(result.error?.contains("give a file (export GET /__admin/ledger?until=EPOCH to one)") == true)
    }
}
