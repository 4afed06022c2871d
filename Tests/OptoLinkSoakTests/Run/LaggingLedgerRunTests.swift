import Foundation
import OptoLinkStaging
import SoakReports
import Synchronization
import Testing

@testable import OptoLinkSoak

/// `run --base-url --ledger FILE` against a local emulator whose ledger reaches the file 2 s
/// behind its responses (a backend that ships its ledger late), on real time: the wiring from
/// the run's last write to the wait and the verdict. The waits' timing is tested in virtual
/// time in ``LedgerCatchUpTests``; here only counts are asserted.
@Suite(.timeLimit(.minutes(2)))
struct LaggingLedgerRunTests {
    static let profile = """
        {"name": "lagging-ledger", "seed": 5, "devices": {"count": 6},
         "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}, {"kind": "event", "name": "e", "repeat": 3}]}],
         "load": {"model": "closed", "concurrency": 6, "iterations": 6, "grace": 30},
         "sdk": {"timeout": 5}}
        """

    /// Copies the server's ledger rows to `file`, in order, each once it is `lag` seconds old.
    static func ship(_ server: StagingServer, to file: URL, lag: Double) -> Task<Void, Never> {
        Task.detached {
            var written = 0
            let encoder = JSONEncoder()
            while !Task.isCancelled {
                let rows = server.ledger()
                let due = rows.dropFirst(written).prefix { $0.arrivedAt <= Date().timeIntervalSince1970 - lag }
                if !due.isEmpty, let handle = try? FileHandle(forWritingTo: file) {
                    _ = try? handle.seekToEnd()
                    for row in due { try? handle.write(contentsOf: encoder.encode(row) + Data([0x0A])) }
                    try? handle.close()
                    written += due.count
                }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    func run(wait: Double, lag: Double = 2) async throws -> (EndToEndRun, SoakRunResult) {
        let server = StagingServer(configuration: StagingConfiguration())
        try await server.start()
        let e2e = try EndToEndRun(profile: Self.profile)
        let file = e2e.directory.appendingPathComponent("shipped-ledger.jsonl")
        try Data().write(to: file)
        let shipper = Self.ship(server, to: file, lag: lag)
        var run = e2e.makeRun {
            $0.baseURL = server.baseURL
            $0.ledgerPath = file.path
            $0.ledgerWaitSeconds = wait
        }
        run.makeBackend = { _, _ in RemoteBackend(baseURL: server.baseURL, ledgerFile: file) }
        let result = await run.execute()
        shipper.cancel()
        await server.stop()
        return (e2e, result)
    }

    @Test("with the wait the run reads the whole ledger: 18 events delivered once, none lost")
    func waitsForTheLedger() async throws {
        let (e2e, result) = try await run(wait: 15)
        let reconciliation = try #require(result.summary?.verdicts?.reconciliation, "\(e2e.log)")
        let events = try #require(reconciliation.endpoints["events"])
        #expect(events.calls == 18 && events.deliveredOnce == 18 && events.lost == 0, "\(e2e.log)")
        #expect(reconciliation.incomplete == nil)
    }

    @Test("a ledger 60 s behind, read at once: every call not covered, never lost, and the check fails")
    func noWaitIsIncompleteNotLost() async throws {
        let (e2e, result) = try await run(wait: 0, lag: 60)
        let summary = try #require(result.summary, "\(e2e.log)")
        let reconciliation = try #require(summary.verdicts?.reconciliation)
        let events = try #require(reconciliation.endpoints["events"])
        #expect(events.calls == 18 && events.lost == 0 && events.notCovered == 18, "\(e2e.log)")
        let incomplete = try #require(reconciliation.incomplete)
        #expect(incomplete.ledgerReachesSeconds == nil)
        #expect(incomplete.notCovered == reconciliation.endpoints.values.reduce(0) { $0 + $1.notCovered })
        #expect(summary.notes.contains { $0.contains("--ledger: waited 0.0 s") })
        // The JUnit file and the HTML verdict table fail the check, saying why.
        let check = try #require(VerdictCheck.checks(summary).first { $0.name == "reconciliation" })
        #expect(check.status == .failed && check.detail.contains("the ledger is incomplete"))
    }
}
