import OptoLinkSoak
import Testing

/// A server of K slots and a fixed service time S, whose capacity is K/S requests/s, modelled in
/// virtual time: each probe's arrivals come from the generator's own ``ArrivalSchedule`` (one
/// request per journey), and each request takes the slot that frees first. The model's metrics
/// go through the command's own path, ``CapacityProbe/terms(_:metrics:notExercised:)``,
/// ``CapacityProbe/verdict(terms:health:limits:)``, ``CapacitySearch`` and ``CapacityReport``.
@Suite("capacity: the knee of a K-slot server")
struct CapacityKSlotTests {
    /// What a request finds when every slot is busy.
    enum Busy {
        /// It waits for the first slot to free (a semaphore's wait): latency grows, nothing fails.
        case queue
        /// It is refused at once with a 503 (a semaphore's try-acquire): failures grow, latency does not.
        case reject
    }

    struct KSlotServer {
        var slots: Int
        var service: Double
        var busy: Busy

        var capacity: Double { Double(slots) / service }

        /// The metrics of a probe holding `rate` requests/s for `seconds`, from an idle server.
        func probe(rate: Double, seconds: Double) -> [String: Double] {
            var free = [Double](repeating: 0, count: slots)
            var latencies: [Double] = []
            var failed = 0
            for arrival in ArrivalSchedule(startRate: rate, stages: [], duration: seconds) {
                let slot = free.indices.min { free[$0] < free[$1] } ?? 0
                switch busy {
                case .queue:
                    let start = max(arrival, free[slot])
                    free[slot] = start + service
                    latencies.append(free[slot] - arrival)
                case .reject:
                    // A slot freeing at the very instant of the arrival is free (evenly spaced
                    // arrivals at exactly K/S meet freeing slots to the last bit).
                    if free[slot] <= arrival + 1e-9 {
                        free[slot] = arrival + service
                        latencies.append(service)
                    } else {
                        failed += 1
                        latencies.append(0)
                    }
                }
            }
            latencies.sort()
            let p99 = latencies[max(0, Int((Double(latencies.count) * 0.99).rounded(.up)) - 1)]
            return [
                "http.failed.rate": Double(failed) / Double(latencies.count),
                "events.call_latency.p99": p99,
                "http.requests_per_second": Double(latencies.count) / seconds,
            ]
        }
    }

    static let errors = "http.failed.rate < 0.01"
    static let latency = "events.call_latency.p99 < 250ms"
    static let slo = [errors, latency]

    /// One probe as the command builds it, the generator keeping its schedule.
    static func probe(_ index: Int, _ rate: Double, _ purpose: CapacitySearch.Purpose, _ server: KSlotServer)
        -> CapacityProbe
    {
        let seconds = 10.0
        let metrics = server.probe(rate: rate, seconds: seconds)
        let terms = CapacityProbe.terms(slo, metrics: metrics)
        let started = Int((rate * seconds).rounded())
        let health = CapacityGeneratorHealth(
            scheduled: started, started: started, lateStarts: 0, dropped: 0, startLagP99: 0.002, cpuShare: 0.3,
            processCPUShare: 0.3)
        let verdict = CapacityProbe.verdict(terms: terms, health: health)
        return CapacityProbe(
            index: index, rate: rate, purpose: purpose, seconds: seconds, warmupSeconds: 0, result: verdict.result,
            failed: verdict.failed, invalidReason: verdict.invalidReason, slo: terms,
            requestsPerSecond: metrics["http.requests_per_second"] ?? 0, journeysPerSecond: rate, limits429: 0,
            generator: health, report: "probes/\(index)", note: verdict.note)
    }

    /// The search against `server` from `minRate`, to its end (bounded by the budget).
    static func search(_ server: KSlotServer, minRate: Double) -> CapacityReport {
        let settings = CapacitySearch.Settings(minRate: minRate, maxRate: 100_000)
        var search = CapacitySearch(settings)
        var probes: [CapacityProbe] = []
        var step = search.start()
        while probes.count < settings.maxProbes, case .probe(let rate, let purpose) = step {
            probes.append(probe(probes.count + 1, rate, purpose, server))
            step = search.record(probes[probes.count - 1].outcome)
        }
        guard case .done(let answer) = step else {
            Issue.record("the search asked for more than \(settings.maxProbes) probes")
            return CapacityReport.make(
                answer: .init(ending: .budgetExhausted, knee: nil, low: nil, high: nil, limitedBy: nil, probes: 0),
                probes: probes, profile: "k-slot", backend: "model", slo: slo, settings: reportSettings)
        }
        return CapacityReport.make(
            answer: answer, probes: probes, profile: "k-slot", backend: "model", slo: slo, settings: reportSettings)
    }

    static let reportSettings = CapacityReport.Settings(
        minRate: 1, maxRate: 100_000, tolerance: 0.05, maxProbes: 8, probeSeconds: 10, warmupSeconds: 0, processes: 1)

    @Test("the model itself: under K/S no wait and no refusal; above it the queue grows or requests are refused")
    func modelBehavesAsAKSlotServer() throws {
        let queue = KSlotServer(slots: 4, service: 0.01, busy: .queue)
        let under = queue.probe(rate: 390, seconds: 10)
        #expect(abs((under["events.call_latency.p99"] ?? 0) - 0.01) < 1e-9 && under["http.failed.rate"] == 0)
        let atCapacity = queue.probe(rate: 400, seconds: 10)
        #expect(abs((atCapacity["events.call_latency.p99"] ?? 0) - 0.01) < 1e-9)
        let over = queue.probe(rate: 440, seconds: 10)
        #expect((over["events.call_latency.p99"] ?? 0) > 0.8, "a 10 % overload queues for most of a second")
        let reject = KSlotServer(slots: 4, service: 0.01, busy: .reject)
        #expect(reject.probe(rate: 400, seconds: 10)["http.failed.rate"] == 0)
        let refused = try #require(reject.probe(rate: 500, seconds: 10)["http.failed.rate"])
        #expect(abs(refused - 0.2) < 0.01, "at 500/s a 400/s server refuses a fifth")
    }

    @Test(
        "the knee within 5 % of K/S in at most 8 probes, limited by latency (waiting) or the error rate (refusing)",
        arguments: [Busy.queue, .reject], [(4, 0.010, 250.0), (2, 0.050, 25.0), (16, 0.004, 2100.0), (8, 0.020, 400.0)])
    func kneeOfAKSlotServer(busy: Busy, shape: (Int, Double, Double)) throws {
        let (slots, service, minRate) = shape
        let server = KSlotServer(slots: slots, service: service, busy: busy)
        let report = Self.search(server, minRate: minRate)
        #expect(report.ending == "knee")
        #expect(report.exitCode == 0)
        #expect(report.probes.count <= 8)
        let knee = try #require(report.knee)
        // A queue that grows by less than the SLO's slack over the window passes: the knee may lie a
        // little above K/S (up to 2.4 % with 10 s probes and 250 ms), never more than the tolerance.
        #expect(abs(knee.requestsPerSecond - server.capacity) / server.capacity <= 0.05, "\(knee)")
        let term = busy == .queue ? Self.latency : Self.errors
        #expect(knee.limitedBy == term)
        #expect(report.message.contains("limited by \(term)"))
        let failing = report.probes.filter { $0.result == "fail" }
        #expect(!failing.isEmpty && failing.allSatisfy { $0.failed == term })
    }
}
