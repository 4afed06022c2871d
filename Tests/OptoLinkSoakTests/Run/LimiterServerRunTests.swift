import Foundation
import OptoLinkHTTP
import Synchronization
import Testing

@testable import OptoLinkSoak
@testable import SoakVerdicts

/// A stand-in backend that is not the project's emulator: `/match` limited by a fixed window
/// aligned to clock edges (`INCR key:<floor(epoch / window)>`, the common implementation), keyed on
/// `X-Forwarded-For` or, as behind a proxy that overwrites that header, on the socket peer. A 429
/// says `Retry after N second(s)` with N = ceil(seconds to the window's end). Everything else
/// answers the contract's success. (`Tests/Scripts/limiter_server.py` is the same in Python, for
/// runs by hand; the verdict-level tests in `LimitOracleFamilyTests` cover every family.)
final class ClockWindowServer: Sendable {
    let limit: Int
    let window: Double
    let keyOnPeer: Bool
    private let counts = Mutex<[String: (slot: Int, count: Int)]>([:])

    init(limit: Int, window: Double, keyOnPeer: Bool) {
        self.limit = limit
        self.window = window
        self.keyOnPeer = keyOnPeer
    }

    func handle(_ request: HTTPRequest, _ connection: HTTPConnectionInfo) -> HTTPHandlerResult {
        switch request.path {
        case "/match":
            let forwarded = request.headers["X-Forwarded-For"]?.split(separator: ",").first
                .map { $0.trimmingCharacters(in: .whitespaces) }
            let key = keyOnPeer ? connection.peerAddress : forwarded ?? connection.peerAddress
            // The clock is read under the lock, so hits are counted in the order of their times.
            let wait: Double? = counts.withLock { counts in
                let now = Date().timeIntervalSince1970
                let slot = Int((now / window).rounded(.down))
                let count = (counts[key].flatMap { $0.slot == slot ? $0.count : nil } ?? 0) + 1
                counts[key] = (slot, count)
                return count <= limit ? nil : Double(slot + 1) * window - now
            }
            guard let wait else {
                return .respond(HTTPResponse(status: 201, body: Array(#"{"matched":false,"matchMethod":"NONE"}"#.utf8)))
            }
            let n = max(1, Int(wait.rounded(.up)))
            let message = "Rate limit exceeded. Retry after \(n) second\(n == 1 ? "" : "s")."
            return .respond(
                HTTPResponse(
                    status: 429,
                    body: Array(
                        #"{"statusCode":429,"error":"Too Many Requests","message":"\#(message)","path":"/match"}"#.utf8)
                ))
        case "/sdk/session": return .respond(ContractBodies.session)
        default: return .respond(HTTPResponse(status: 200, body: Array(#"{"ok":true}"#.utf8)))
        }
    }
}

/// The limit oracle through a whole run against ``ClockWindowServer``, on real time: the wiring
/// from the SDK's attempts to the family fit and the key check. Load: 60 first launches in 6 s,
/// 60 % of the devices behind one NAT address, `/match` declared 4 per 2 s per IP, no retries.
@Suite(.timeLimit(.minutes(2)))
struct LimiterServerRunTests {
    static let profile = """
        {"name": "limiter-server", "seed": 21,
         "devices": {"count": 80, "sharedNAT": 0.6, "sharedNATAddress": "198.51.100.30"},
         "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}]}],
         "load": {"model": "open", "startRate": 10, "stages": [{"duration": 6, "target": 10}], "maxInFlight": 100,
                  "grace": 10},
         "sdk": {"timeout": 5, "maxRetries": 0},
         "expect": {"limits": {"match": "4/2s per ip"}, "algorithm": "fixed_window", "thresholds": []}}
        """

    func run(keyOnPeer: Bool) async throws -> (EndToEndRun, LimitOracleVerdict.Bucket) {
        let e2e = try EndToEndRun(profile: Self.profile)
        let limiter = ClockWindowServer(limit: 4, window: 2, keyOnPeer: keyOnPeer)
        let configuration = HTTPServer.Configuration(
            host: "127.0.0.1", port: 0, timeouts: .init(shutdownGrace: .milliseconds(300)))
        let result = try await withHTTPServer(configuration, handler: { limiter.handle($0, $1) }) { server in
            let base = try #require(URL(string: "http://127.0.0.1:\(server.port)"))
            // The run starts 1 s into a 2 s clock window, so a window from the first hit and one on
            // the clock's edges disagree from the first window on, and the fit can tell them apart.
            let startAt = (Date().timeIntervalSince1970 / 2).rounded(.up) * 2 + 3
            var run = e2e.makeRun {
                $0.baseURL = base
                $0.startAt = startAt
            }
            run.makeBackend = { _, _ in RemoteBackend(baseURL: base, ledgerFile: nil) }
            return await run.execute()
        }
        let bucket = try #require(result.summary?.verdicts?.limits.buckets["match"], "\(e2e.log)")
        return (e2e, bucket)
    }

    @Test("a correct clock-aligned window: exact, and the report names fixed_window_clock")
    func clockAlignedWindowIsExactAndNamed() async throws {
        let (e2e, bucket) = try await run(keyOnPeer: false)
        #expect(bucket.rejected > 0, "the limit was reached: \(e2e.log)")
        #expect(bucket.family == .fixedWindowClock, "fitting \(bucket.familiesFitting), \(bucket.familyScores)")
        #expect(bucket.tooLenient == 0 && bucket.tooStrict == 0 && bucket.wrongN == 0, "\(bucket)")
        #expect(bucket.enforcedExactly)
        #expect(bucket.keyMismatch == nil)
    }

    @Test("the same window keyed on the socket peer: a key mismatch, not a too-strict server")
    func peerKeyedIsAKeyMismatch() async throws {
        let (_, bucket) = try await run(keyOnPeer: true)
        let mismatch = try #require(bucket.keyMismatch, "\(bucket)")
        #expect(mismatch.declared == .ip && mismatch.fitting == .shared)
        #expect(mismatch.declaredTooStrict > 0)
        #expect(bucket.tooStrict == 0 && bucket.tooLenient == 0)
        #expect(bucket.priorUse == 0)
    }
}
