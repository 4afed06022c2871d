import Foundation
import Testing

@testable import OptoLinkSoak
import SoakRecords

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Live Prometheus metrics")
struct LiveMetricsTests {
    @Test("HDR counts become cumulative Prometheus buckets; +Inf equals the count")
    func buckets() {
        var h = LatencyHistogram()
        for v in [0.0004, 0.0009, 0.003, 0.003, 0.2, 7.0, 100.0] { h.record(v) }
        let p = h.prometheus
        let bounds = LiveMetrics.latencyBounds
        for (bound, count) in zip(bounds, p.cumulative) {
            let exact = [0.0004, 0.0009, 0.003, 0.003, 0.2, 7.0, 100.0].filter { $0 <= bound }.count
            #expect(count == UInt64(exact), "le=\(bound)")
        }
        #expect(p.count == 7 && abs(p.sum - 107.2073) < 1e-9)
    }

    @Test("the exposition: HELP/TYPE per family, escaped labels, histogram series, whole numbers as integers")
    func exposition() {
        var h = LatencyHistogram()
        h.record(0.002)
        let endpoint = LiveMetrics.Endpoint(
            attemptsByStatus: ["200": 3, "timed_out": 1], callsByOutcome: ["ok": 3], attemptLatency: h.prometheus,
            callLatency: h.prometheus, inFlightCalls: 2)
        let live = LiveMetrics(
            profile: "we\"ird\\name\n", runId: "r1", elapsedSeconds: 1.5, endpoints: ["match": endpoint],
            status429: 4, errors: 1, journeysStarted: 9, journeysCompleted: 7, journeysUnfinished: 0,
            journeysInFlight: 2, lateStarts: 1, lateThresholdSeconds: 0.01, residentBytes: 1_048_576)
        let text = live.exposition()
        #expect(text.contains(#"optolink_soak_info{profile="we\"ird\\name\n",run_id="r1",version=""#))
        #expect(text.contains("# TYPE optolink_soak_requests_total counter\n"))
        #expect(text.contains(#"optolink_soak_requests_total{endpoint="match",status="timed_out"} 1"#))
        #expect(text.contains(#"optolink_soak_attempt_latency_seconds_bucket{endpoint="match",le="0.001"} 0"#))
        #expect(text.contains(#"optolink_soak_attempt_latency_seconds_bucket{endpoint="match",le="0.0025"} 1"#))
        #expect(text.contains(#"optolink_soak_attempt_latency_seconds_bucket{endpoint="match",le="+Inf"} 1"#))
        #expect(text.contains(#"optolink_soak_in_flight_calls{endpoint="match"} 2"#))
        #expect(text.contains("optolink_soak_429_total 4\n"))
        #expect(text.contains("optolink_soak_late_starts_total 1\n"))
        #expect(text.contains("process_resident_memory_bytes 1048576\n"))
        // Every sample line belongs to a family announced by # TYPE before it.
        var announced: Set<String> = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") { announced.insert(String(line.split(separator: " ")[2])) }
            guard !line.hasPrefix("#") else { continue }
            let name = String(line.prefix { $0 != "{" && $0 != " " })
            let family = ["_bucket", "_sum", "_count"].reduce(name) { n, s in
                n.hasSuffix(s) && announced.contains(String(n.dropLast(s.count))) ? String(n.dropLast(s.count)) : n
            }
            #expect(announced.contains(family), "\(line)")
        }
    }

    @Test("a shard's samples all carry its shard label, so summing over shards adds counters and buckets")
    func shardLabel() {
        func shard(_ index: Int, latencies: [Double]) -> String {
            var h = LatencyHistogram()
            for latency in latencies { h.record(latency) }
            let endpoint = LiveMetrics.Endpoint(
                attemptsByStatus: ["200": latencies.count], callsByOutcome: ["ok": latencies.count],
                attemptLatency: h.prometheus, callLatency: h.prometheus)
            var live = LiveMetrics(
                profile: "p", runId: "r", elapsedSeconds: 1, endpoints: ["events": endpoint], status429: 0,
                errors: 0, journeysStarted: 1, journeysCompleted: 1, journeysUnfinished: 0, journeysInFlight: 0,
                lateStarts: 0, lateThresholdSeconds: 0.01)
            live.shard = SoakShard(index: index, count: 2)
            return live.exposition()
        }
        let texts = [shard(0, latencies: [0.002, 0.002]), shard(1, latencies: [0.2])]
        for (index, text) in texts.enumerated() {
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                #expect(line.contains("shard=\"\(index)/2\""), "\(line)")
            }
        }
        // `sum without (shard)` over the two: counters and each `le` bucket add.
        func value(_ prefix: String, in text: String) -> Double {
            text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.split(separator: " ")[1]) }
                ?? -1
        }
        let requests = texts.map { value(#"optolink_soak_requests_total{shard="#, in: $0) }.reduce(0, +)
        #expect(requests == 3)
        let bucket = #"optolink_soak_attempt_latency_seconds_bucket{shard="#
        let le0025 = texts.enumerated().map {
            value(bucket + #""\#($0.offset)/2",endpoint="events",le="0.0025"}"#, in: $0.element)
        }
        let le025 = texts.enumerated().map {
            value(bucket + #""\#($0.offset)/2",endpoint="events",le="0.25"}"#, in: $0.element)
        }
        #expect(le0025 == [2, 0] && le025 == [2, 1])
    }

    @Test("--metrics-listen serves /metrics during a real run; 404 elsewhere")
    func servesDuringRun() async throws {
        let e2e = try EndToEndRun(
            profile: e2eProfile(
                devices: 30, rate: 15, steps: #"{"kind": "firstLaunch"}, {"kind": "event", "name": "e"}"#))
        let run = e2e.makeRun { $0.metricsListen = MetricsListenAddress(host: "127.0.0.1", port: 0) }
        async let result = run.execute()
        var scraped: String? = nil
        var missing = 0
        for _ in 0..<60 where scraped == nil {
            try await Task.sleep(for: .milliseconds(100))
            guard let line = e2e.log.first(where: { $0.hasPrefix("metrics: http://") }),
                let url = URL(string: String(line.dropFirst("metrics: ".count)))
            else { continue }
            let (data, response) = try await URLSession.shared.data(from: url)
            let text = String(decoding: data, as: UTF8.self)
            if text.contains("optolink_soak_requests_total{") { scraped = text }
            let other = url.deletingLastPathComponent().appendingPathComponent("nope")
            if let (_, r) = try? await URLSession.shared.data(from: other), (r as? HTTPURLResponse)?.statusCode == 404 {
                missing += 1
            }
            #expect(
                (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("text/plain")
                    == true)
        }
        let finished = await result
        #expect(finished.exitCode == 0, "\(e2e.log)")
        let text = try #require(scraped)
        #expect(text.contains("optolink_soak_journeys_total{state=\"started\"}"))
        #expect(missing > 0)
    }

    @Test("live metrics expose the dropped count")
    func prometheus() {
        var metrics = LiveMetrics(
            profile: "p", runId: "r", elapsedSeconds: 1, endpoints: [:], status429: 0, errors: 0, journeysStarted: 1,
            journeysCompleted: 1, journeysUnfinished: 0, journeysInFlight: 0, lateStarts: 0, lateThresholdSeconds: 0.1,
            residentBytes: nil)
        metrics.journeysDropped = 7
        #expect(metrics.exposition().contains("optolink_soak_journeys_total{state=\"dropped\"} 7"))
    }
}
