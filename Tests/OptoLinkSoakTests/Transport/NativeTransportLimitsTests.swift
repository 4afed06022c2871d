import Foundation
import Synchronization
import OptoLink
import OptoLinkHTTP
import Testing

import OptoLinkSoak

/// The native transport's bounds as a run sets them: `--connections` is the number of connections
/// whatever the loop count, and a response body beyond 1 MiB fails instead of being held.
@Suite(.timeLimit(.minutes(1)))
struct NativeTransportLimitsTests {
    private static let launchReplies: @Sendable (HTTPRequest) -> HTTPHandlerResult? = { request in
        switch request.path {
        case "/match":
            .respond(HTTPResponse(status: 201, body: Array(#"{"matched":false,"matchMethod":"NONE"}"#.utf8)))
        case "/sdk/session": .respond(ContractBodies.session)
        default: nil
        }
    }

    private func runAgainst(
        devices: Int, configure: @escaping (inout SoakRunOptions) -> Void,
        events: @escaping @Sendable (HTTPRequest) -> HTTPHandlerResult,
        override: @escaping @Sendable (HTTPRequest) -> HTTPHandlerResult? = { _ in nil }
    ) async throws -> (EndToEndRun, sdkConnections: Set<UInt64>, result: SoakRunResult) {
        let e2e = try EndToEndRun(
            profile: """
                {"name": "limits", "seed": 5, "devices": {"count": \(devices)},
                 "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}, {"kind": "event", "name": "e"}]}],
                 "load": {"model": "closed", "concurrency": \(devices), "iterations": \(devices), "grace": 20},
                 "sdk": {"timeout": 10, "maxRetries": 0}}
                """)
        let configuration = HTTPServer.Configuration(
            host: "127.0.0.1", port: 0, timeouts: .init(shutdownGrace: .milliseconds(300)))
        let connections = Mutex<Set<UInt64>>([])
        return try await withHTTPServer(
            configuration,
            handler: { request, connection in
                if request.headers["X-OptoLink-SDK"] != nil {
                    connections.withLock { _ = $0.insert(connection.connectionId) }
                }
                return override(request) ?? Self.launchReplies(request)
                    ?? (request.path == "/sdk/events" ? events(request) : .respond(.init(status: 404)))
            }
        ) { server in
            let base = try #require(URL(string: "http://127.0.0.1:\(server.port)"))
            var run = e2e.makeRun {
                $0.baseURL = base
                configure(&$0)
            }
            run.makeBackend = { _, options in
                RemoteBackend(baseURL: base, ledgerFile: options.ledgerPath.map { URL(fileURLWithPath: $0) })
            }
            let result = await run.execute()
            #expect(result.summary != nil, "\(e2e.log)")
            return (e2e, connections.withLock { $0 }, result)
        }
    }

    @Test("--connections 1 with 2 client loops opens one connection, and says the loops were cut")
    func oneConnectionAcrossLoops() async throws {
        let (e2e, sdkConnections, _) = try await runAgainst(
            devices: 6,
            configure: {
                $0.connections = 1
                $0.clientLoops = 2
            },
            events: { _ in
                .respondAfter(HTTPResponse(status: 202, body: Array(#"{"ok":true}"#.utf8)), delay: .milliseconds(20))
            })
        #expect(sdkConnections.count == 1, "\(sdkConnections)")
        #expect(e2e.log.contains { $0.contains("--client-loops 2 cut to 1") }, "\(e2e.log)")
        #expect(try e2e.attempts().filter { $0.endpoint == .events }.allSatisfy { $0.status == 202 })
    }

    @Test func theLoopCountFollowsTheConnections() {
        var said: [String] = []
        #expect(
            SoakClientLoops.count(requested: nil, pool: .shared, connections: 1, log: { said.append($0) }, cores: 2)
                == 1)
        #expect(
            SoakClientLoops.count(requested: nil, pool: .shared, connections: 128, log: { said.append($0) }, cores: 2)
                == 2)
        #expect(said.isEmpty, "the default is cut without a word")
        #expect(SoakClientLoops.count(requested: 4, pool: .shared, connections: 3, log: { said.append($0) }) == 3)
        #expect(
            said == ["--client-loops 4 cut to 3: a shared pool of --connections 3 has one connection per loop at most"])
        #expect(SoakClientLoops.count(requested: 4, pool: .perPartition, connections: 1, log: { said.append($0) }) == 4)
    }

    /// A run asked to be reconciled with `--ledger` that cannot read it keeps its report, says why
    /// in the summary and in the reconciliation verdict, and exits 2 (not 0 with "no ledger", as
    /// if none had been given).
    @Test func anUnreadableLedgerFailsTheRunAfterItsReport() async throws {
        let ledger = FileManager.default.temporaryDirectory.appendingPathComponent("bad-ledger-\(UUID()).json")
        try Data("[[[".utf8).write(to: ledger)
        defer { try? FileManager.default.removeItem(at: ledger) }
        let (_, _, result) = try await runAgainst(
            devices: 1, configure: { $0.ledgerPath = ledger.path },
            events: { _ in .respond(HTTPResponse(status: 202, body: Array(#"{"ok":true}"#.utf8))) })
        #expect(result.exitCode == 2)
        let summary = try #require(result.summary)
        #expect(
            summary.notes.contains { $0.hasPrefix("--ledger could not be read: --ledger \(ledger.lastPathComponent)") })
        let note = summary.verdicts?.reconciliation.note ?? ""
        #expect(note.hasPrefix("not available: --ledger: "), "\(note)")
    }

    @Test func aLedgerPathThatIsADirectoryIsRefusedBeforeTheRun() async throws {
        let e2e = try EndToEndRun(
            profile:
                #"{"name": "l", "devices": {"count": 1}, "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}]}], "load": {"model": "closed", "iterations": 1}}"#
        )
        let run = e2e.makeRun {
            $0.baseURL = URL(string: "http://127.0.0.1:9")
            $0.ledgerPath = FileManager.default.temporaryDirectory.path
        }
        let result = await run.execute()
        #expect(result.exitCode == 2 && result.summary == nil)
        #expect(
            result.error?.contains("is a directory, not a ledger file") == true, "\(String(describing: result.error))")
    }

    /// The success status with a body that is not the contract's JSON (a WAF's HTML page, an empty
    /// body, a `/match` without `matched`) counts as failed; the SDK took it as a success or a miss.
    @Test(arguments: [
        ("/sdk/events", "events", "<html>Access denied</html>", 200, 1), ("/sdk/events", "events", "", 200, 1),
        ("/match", "match", "[]", 201, 1), ("/match", "match", #"{"ok":true}"#, 201, 1),
        ("/sdk/events", "events", #"{"ok":true}"#, 200, 0),
        ("/sdk/events", "events", "{}", 200, 1), ("/sdk/events", "events", #"{"ok":"yes"}"#, 200, 1),
        ("/match", "match", #"{"matched":false,"matchMethod":"NONE"}"#, 201, 0),
    ])
    func aSuccessBodyOffTheContractIsFailed(
        _ route: String, _ endpoint: String, _ body: String, _ status: Int, _ off: Int
    )
        async throws
    {
        let (_, _, result) = try await runAgainst(
            devices: 1, configure: { _ in },
            events: { _ in .respond(HTTPResponse(status: 200, body: Array(#"{"ok":true}"#.utf8))) },
            override: { request in
                guard request.path == route else { return nil }
                return .respond(HTTPResponse(status: status, body: Array(body.utf8)))
            })
        let summary = try #require(result.summary)
        #expect(summary.endpoints[endpoint]?.offContractResponses == off, "\(body)")
        #expect(summary.metrics["\(endpoint).failed"] == Double(off))
        #expect(summary.metrics["http.failed"] == Double(off))
    }

    @Test("a 2 MiB response body is a bad response, not 2 MiB held per connection")
    func oversizedBodyIsABadResponse() async throws {
        let (e2e, _, _) = try await runAgainst(
            devices: 1, configure: { _ in },
            events: { _ in
                .respond(HTTPResponse(status: 200, body: Array(repeating: UInt8(ascii: " "), count: 2 << 20)))
            })
        let events = try e2e.attempts().filter { $0.endpoint == .events }
        #expect(events.map(\.errorKind) == [.badResponse], "\(events)")
    }
}
