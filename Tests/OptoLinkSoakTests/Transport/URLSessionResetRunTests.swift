import Foundation
import OptoLink
import OptoLinkHTTP
import Testing

import OptoLinkSoak

/// Issue 8, fault 4: "a connection reset by the server is reported as `timed_out` after the full
/// timeout, not as `connection_lost` at once", through the whole tool on `--transport urlsession`
/// (docs/LINUX.md §1, "A reset on a reused connection"). The server answers the launch and resets
/// every event, which goes out on the launch's kept-alive connection.
@Suite(.timeLimit(.minutes(1)))
struct URLSessionResetRunTests {
    @Test("--transport urlsession: an event the server resets is recorded as connection_lost, not timed_out")
    func resetEventIsConnectionLost() async throws {
        let e2e = try EndToEndRun(
            profile: """
                {"name": "reset", "seed": 3, "devices": {"count": 1},
                 "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}, {"kind": "event", "name": "e"}]}],
                 "load": {"model": "open", "startRate": 1, "stages": [{"duration": 1, "target": 1}], "grace": 20},
                 "sdk": {"timeout": 10, "maxRetries": 0}}
                """)
        let configuration = HTTPServer.Configuration(
            host: "127.0.0.1", port: 0, timeouts: .init(shutdownGrace: .milliseconds(300)))
        try await withHTTPServer(
            configuration,
            handler: { request, _ in
                switch request.path {
                case "/sdk/events": .reset
                case "/match":
                    .respond(HTTPResponse(status: 201, body: Array(#"{"matched":false,"matchMethod":"NONE"}"#.utf8)))
                case "/sdk/session": .respond(ContractBodies.session)
                default: .respond(HTTPResponse(status: 404))
                }
            }
        ) { server in
            let base = try #require(URL(string: "http://127.0.0.1:\(server.port)"))
            var run = e2e.makeRun {
                $0.baseURL = base
                $0.transport = .urlsession
            }
            run.makeBackend = { _, _ in RemoteBackend(baseURL: base, ledgerFile: nil) }
            let result = await run.execute()
            #expect(result.summary != nil, "\(e2e.log)")
            let events = try e2e.attempts().filter { $0.endpoint == .events }
            #expect(events.map(\.errorKind) == [.connectionLost], "\(events)")
            // At once: well before the 10 s timeout a stalled re-send would have waited out.
            #expect(events.allSatisfy { $0.end - $0.actualStart < 5 }, "\(events.map { $0.end - $0.actualStart })")
        }
    }
}
