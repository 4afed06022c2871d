import Foundation
import OptoLinkHTTP
import OptoLinkSoak
import OptoLinkStaging
import Synchronization
import Testing

/// `capacity --base-url` against a real server of K slots and a service time S on a loopback
/// socket: the emulator's routes behind a gate that gives each request the slot that frees
/// first, lets it wait for one at most `maxWait`, and refuses it with a 503 otherwise. Its
/// capacity is K/S requests/s; above it the 503s grow, below it none come but from jitter.
///
/// Short probes on a loaded 2-core machine: the generator's wall-clock limits are lifted (as
/// in ``CapacityCommandTests``) and the knee is checked within a band wide enough for timer
/// jitter; ``CapacityKSlotTests`` checks the 5 % in virtual time.
@Suite("capacity end to end: a real K-slot server", .serialized, .timeLimit(.minutes(3)))
struct CapacityKSlotEndToEndTests {
    /// The slot gate in front of a ``StagingBackend``; admin routes pass straight through.
    final class KSlotGate: Sendable {
        let slots: Int
        let service: Duration
        let maxWait: Duration
        /// The emulator's routes with its rate limits off: the slots are the only limit.
        let backend = StagingBackend(configuration: StagingConfiguration(limits: StagingLimits(enabled: false)))
        /// When each slot frees.
        private let free: Mutex<[ContinuousClock.Instant]>

        init(slots: Int, service: Duration, maxWait: Duration) {
            self.slots = slots
            self.service = service
            self.maxWait = maxWait
            free = Mutex(Array(repeating: ContinuousClock.now, count: slots))
        }

        var capacity: Double { Double(slots) / (service / .seconds(1)) }

        func handle(_ request: HTTPRequest, _ connection: HTTPConnectionInfo) -> HTTPHandlerResult {
            if request.path.hasPrefix("/__admin") || request.path.hasPrefix("/.well-known") {
                return backend.handle(request, connection)
            }
            let now = ContinuousClock.now
            let finish: ContinuousClock.Instant? = free.withLock { free in
                let slot = free.indices.min { free[$0] < free[$1] } ?? 0
                let start = max(now, free[slot])
                guard start - now <= maxWait else { return nil }
                free[slot] = start + service
                return free[slot]
            }
            guard let finish else {
                let body = #"{"statusCode":503,"message":"All slots busy"}"#
                return .respond(
                    HTTPResponse(status: 503, headers: ["Content-Type": "application/json"], body: Array(body.utf8)))
            }
            let answer = backend.handle(request, connection)
            guard case .respond(let response) = answer else { return answer }
            return .respondAfter(response, delay: finish - now)
        }
    }

    /// One journey of one launch; no SDK retries, so each 503 is one failed call.
    static let profile = """
        {"name": "k-slot", "seed": 9, "devices": {"count": 400},
         "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}]}],
         "load": {"model": "open", "startRate": 5, "stages": [{"duration": 1, "target": 5}], "grace": 2},
         "sdk": {"timeout": 5, "maxRetries": 0}}
        """

    static let errors = "http.failed.rate < 0.05"
    static let latency = "match.call_latency.p99 < 2s"

    @Test("the search against K=4 slots of 100 ms (40 requests/s) finds the knee near 40/s, limited by 503s")
    func findsTheKneeOfARealServer() async throws {
        let gate = KSlotGate(slots: 4, service: .milliseconds(100), maxWait: .milliseconds(100))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("capacity-kslot-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let profile = directory.appendingPathComponent("profile.json")
        try Data(Self.profile.utf8).write(to: profile)
        let configuration = HTTPServer.Configuration(
            host: "127.0.0.1", port: 0, timeouts: .init(shutdownGrace: .milliseconds(300)))
        let report = try await withHTTPServer(configuration, handler: gate.handle) { server in
            var options = CapacityCommand.Options()
            options.profilePath = profile.path
            options.slo = [Self.errors, Self.latency]
            options.run.baseURL = URL(string: "http://127.0.0.1:\(server.port)")
            // The generator shares this process and its 2 cores with the server and other tests.
            options.generatorLimits.lateShare = 1
            options.generatorLimits.droppedShare = 1
            options.generatorLimits.startLagP99 = 3600
            options.generatorLimits.cpuShare = 10
            // A launch is two requests (/match, /sdk/session): the knee is near 20 journeys/s.
            options.minRate = 12
            options.maxRate = 200
            options.maxProbes = 8
            options.probeSeconds = 2
            options.warmup = 0
            options.outDirectory = directory.appendingPathComponent("report").path
            let result = await CapacityCommand.run(options) { _ in }
            let data = try Data(contentsOf: directory.appendingPathComponent("report/capacity.json"))
            let report = try JSONDecoder().decode(CapacityReport.self, from: data)
            #expect(result.exitCode == report.exitCode)
            return report
        }
        #expect(report.probes.count <= 8)
        #expect(["knee", "budgetExhausted"].contains(report.ending), "\(report.message)")
        let knee = try #require(report.knee, "\(report.text)")
        #expect(
            knee.requestsPerSecond >= gate.capacity * 0.7 && knee.requestsPerSecond <= gate.capacity * 1.15,
            "knee \(knee.requestsPerSecond) requests/s for a capacity of \(gate.capacity): \(report.text)")
        #expect(knee.limitedBy == Self.errors, "\(report.text)")
        let failing = report.probes.filter { $0.result == "fail" }
        #expect(!failing.isEmpty)
        // Judged on the planned rate (two requests a journey): on a loaded machine a short probe's
        // measured rate falls below its plan while its bursts still meet the gate's limit.
        #expect(failing.allSatisfy { $0.rate * 2 >= gate.capacity * 0.7 }, "\(report.text)")
        #expect(
            FileManager.default.fileExists(atPath: directory.appendingPathComponent("report/report.html").path))
    }
}
