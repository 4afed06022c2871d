import Foundation
import OptoLink
import OptoLinkHTTP
import Synchronization
import Testing

import OptoLinkSoak
import SoakRecords

#if canImport(Glibc)
    import Glibc
#endif

/// A server on 127.0.0.1 that answers every SDK request with response headers and then a body
/// that trickles one byte every 100 ms (URLSession's idle timer never trips on it). The AASA
/// probe gets a plain 404.
final class TrickleServer: Sendable {
    let port: Int
    private let listener: Int32
    private let state = Mutex<(stopped: Bool, connections: [Int32])>((false, []))

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(listener, raw, length) == 0 && listen(listener, 64) == 0
                    && getsockname(listener, raw, &length) == 0
            }
        }
        guard bound else { throw URLError(.cannotConnectToHost) }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 { return }
                let admitted = state.withLock { s -> Bool in
                    if s.stopped { return false }
                    s.connections.append(client)
                    return true
                }
                guard admitted else {
                    close(client)
                    return
                }
                Thread { [self] in serve(client) }.start()
            }
        }.start()
    }

    private func serve(_ client: Int32) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        var request: [UInt8] = []
        while true {
            // One request per connection is enough: its answer never ends.
            let count = read(client, &buffer, buffer.count)
            if count <= 0 { return }
            request += buffer[0..<count]
            if let text = String(bytes: request, encoding: .utf8), text.contains("\r\n\r\n") {
                if text.hasPrefix("GET /.well-known") {
                    send(client, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                    request = []
                    continue
                }
                send(client, "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
                while !state.withLock({ $0.stopped }) {
                    if !send(client, " ") { return }
                    usleep(100_000)
                }
                return
            }
        }
    }

    @discardableResult
    private func send(_ client: Int32, _ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { write(client, $0.baseAddress, $0.count) } == bytes.count
    }

    func stop() {
        let connections = state.withLock { s -> [Int32] in
            s.stopped = true
            defer { s.connections = [] }
            return s.connections
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for connection in connections {
            shutdown(connection, Int32(SHUT_RDWR))
        }
    }
}

extension WholeRuns {
    /// The hard stop through the whole tool (URLSession, sockets, the real clock): whatever the
    /// backend does, a run ends within `duration + grace` plus teardown, and every cut call is
    /// counted. Exact numbers are in `DriverDeadlineTests` (virtual time). Here the wall-clock
    /// bound is `cutoff + slack`, with `slack` (10 s) wide enough for a loaded machine (a whole
    /// `swift test` on 2 cores shared with other builds was seen 6 s late) and each backend's
    /// uncut run far longer than that bound (a 20 s Retry-After, a 20 s timeout times three
    /// attempts), so the bound still tells a cut run from one that waited. The precise check is
    /// that no attempt started at or after the cutoff.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct HardStopEndToEndTests {
        /// Wall-clock allowance over the cutoff for teardown and a loaded machine.
        static let slack = 10.0

        /// `journeys` journeys (one device each), all planned in the first half second (4 a
        /// second, from 0.125 s) of a `duration` of 4 s, so that a scheduler running seconds late
        /// on a loaded machine still starts them inside the step window, which the assertions need.
        static func profile(journeys: Int, duration: Double = 4, grace: Double = 3, timeout: Double = 20) -> String {
            """
            {"name": "hard-stop", "seed": 3, "devices": {"count": \(journeys)},
             "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}, {"kind": "event", "name": "e"}]}],
             "load": {"model": "open", "startRate": 4, "stages": [{"duration": \(duration), "target": 4}],
                      "iterations": \(journeys), "duration": \(duration), "grace": \(grace)},
             "sdk": {"timeout": \(timeout), "maxRetries": 2}}
            """
        }

        /// Runs `profile` against `baseURL`; returns the result and the run's wall-clock time.
        static func run(_ e2e: EndToEndRun, baseURL: URL) async -> (SoakRunResult, Double) {
            var run = e2e.makeRun { $0.baseURL = baseURL }
            run.makeBackend = { _, options in RemoteBackend(baseURL: options.baseURL ?? baseURL, ledgerFile: nil) }
            let started = ContinuousClock.now
            let result = await run.execute()
            return (result, RunTimeline.seconds(ContinuousClock.now - started))
        }

        /// What every cut run must show: the deadline ended it, every journey (one per device, all
        /// in the first second) is unfinished, every /match call is counted as cancelled by the run, and no
        /// attempt started at or after the cutoff.
        static func expectCut(
            _ e2e: EndToEndRun, _ result: SoakRunResult, cutoff: Double, elapsed: Double, journeys: Int
        ) throws {
            #expect(elapsed < cutoff + slack, "the run took \(elapsed) s for a \(cutoff) s bound")
            let summary = try #require(result.summary, "\(e2e.log)")
            #expect(summary.run.stopReason == .deadline)
            #expect(summary.run.durationSeconds < cutoff + slack, "\(summary.run.durationSeconds)")
            #expect(summary.journeys.unfinished == journeys && summary.journeys.completed == 0)
            let attempts = try e2e.attempts()
            #expect(attempts.allSatisfy { $0.actualStart < cutoff }, "\(attempts.map(\.actualStart))")
            let matches = try e2e.calls().filter { $0.endpoint == .match }
            #expect(matches.count == journeys && matches.allSatisfy { $0.outcome == .cancelledByRun })
            #expect(summary.metrics["match.calls.cancelled_by_run"] == Double(journeys))
            #expect(summary.metrics["http.errors"] == 0)
        }

        @Test(
            "429 'Retry after N seconds.' on every call (N = 20, 60), duration 4, grace 3: the run ends by 7 s + slack",
            arguments: [20, 60])
        func rateLimitedBackend(retryAfter: Int) async throws {
            let e2e = try EndToEndRun(profile: Self.profile(journeys: 1))
            let body = Array(
                #"{"statusCode":429,"message":"Rate limit exceeded. Retry after \#(retryAfter) seconds."}"#.utf8)
            let configuration = HTTPServer.Configuration(
                host: "127.0.0.1", port: 0, timeouts: .init(shutdownGrace: .milliseconds(300)))
            try await withHTTPServer(
                configuration,
                handler: { request, _ in
                    request.path.hasPrefix("/.well-known")
                        ? .respond(HTTPResponse(status: 404)) : .respond(HTTPResponse(status: 429, body: body))
                }
            ) { server in
                let (result, elapsed) = await Self.run(e2e, baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
                try Self.expectCut(e2e, result, cutoff: 7, elapsed: elapsed, journeys: 1)
                #expect(try e2e.attempts().map(\.status) == [429], "the retry \(retryAfter) s later is cut")
            }
        }

        @Test("a backend that never answers, duration 4, grace 3 (timeout 20 s): the run ends by 7 s + slack")
        func silentBackend() async throws {
            let e2e = try EndToEndRun(profile: Self.profile(journeys: 2))
            let configuration = HTTPServer.Configuration(
                host: "127.0.0.1", port: 0, timeouts: .init(shutdownGrace: .milliseconds(300)))
            try await withHTTPServer(
                configuration,
                handler: { request, _ in
                    request.path.hasPrefix("/.well-known")
                        ? .respond(HTTPResponse(status: 404))
                        : .respondAfter(HTTPResponse(status: 201), delay: .seconds(600))
                }
            ) { server in
                let (result, elapsed) = await Self.run(e2e, baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
                try Self.expectCut(e2e, result, cutoff: 7, elapsed: elapsed, journeys: 2)
                #expect(try e2e.attempts().map(\.errorKind) == [.cancelledByRun, .cancelledByRun])
            }
        }

        @Test("a backend that trickles its body, duration 4, grace 3 (timeout 20 s): the run ends by 7 s + slack")
        func tricklingBackend() async throws {
            let e2e = try EndToEndRun(profile: Self.profile(journeys: 2))
            let server = try TrickleServer()
            defer { server.stop() }
            let (result, elapsed) = await Self.run(e2e, baseURL: URL(string: "http://127.0.0.1:\(server.port)")!)
            try Self.expectCut(e2e, result, cutoff: 7, elapsed: elapsed, journeys: 2)
            #expect(try e2e.attempts().map(\.errorKind) == [.cancelledByRun, .cancelledByRun])
        }
    }
}
