import SoakRecords
import SoakReports
/// A snapshot of a running soak for `--metrics-listen`, rendered in the Prometheus text format.
///
/// Counters count from the run's start; latency histograms use ``LiveMetrics/latencyBounds``
/// (seconds), each HDR bucket counted in the `le` bucket its midpoint falls in (within 0.4 %).
package struct LiveMetrics: Sendable, Equatable {
    /// Prometheus `le` bounds in seconds: 0.5 ms … 60 s.
    package static let latencyBounds: [Double] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
    ]

    /// One latency histogram in Prometheus form.
    package struct Histogram: Sendable, Equatable {
        /// Observations ≤ each of ``LiveMetrics/latencyBounds``.
        package var cumulative: [UInt64]
        /// Sum of observations, seconds.
        package var sum: Double
        package var count: UInt64
    }

    package struct Endpoint: Sendable, Equatable {
        /// Finished attempts by HTTP status (`"200"`) or error kind (`"timed_out"`).
        package var attemptsByStatus: [String: Int] = [:]
        /// Finished calls by outcome.
        package var callsByOutcome: [String: Int] = [:]
        package var attemptLatency: Histogram
        package var callLatency: Histogram
        /// Calls with an attempt in flight now.
        package var inFlightCalls = 0
    }

    package var profile: String
    package var runId: String
    /// Seconds since the run started.
    package var elapsedSeconds: Double
    package var endpoints: [String: Endpoint]
    package var status429: Int
    /// 5xx responses plus attempts without a response.
    package var errors: Int
    package var journeysStarted: Int
    package var journeysCompleted: Int
    package var journeysUnfinished: Int
    /// Journeys the driver has running now.
    package var journeysInFlight: Int
    /// Journeys that started more than the late threshold after their planned time.
    package var lateStarts: Int
    package var lateThresholdSeconds: Double
    /// Arrivals the open model planned that never started (counted when the run ends).
    package var journeysDropped = 0
    /// Resident memory of the soak process, bytes (`nil` where `/proc` is missing).
    package var residentBytes: Int?
    /// The shard this process runs (`run --shard I/N`): every sample then carries a
    /// `shard="I/N"` label, so one Prometheus sums the shards' series without them colliding.
    package var shard: SoakShard?

    /// The Prometheus text exposition (format 0.0.4) of this snapshot.
    package func exposition() -> String {
        var out = PrometheusText()
        let shardLabel = shard.map { [("shard", $0.description)] } ?? []
        out.family("optolink_soak_info", .gauge, help: "The run: profile, run id and tool version (value 1).")
        out.sample(
            "optolink_soak_info",
            shardLabel + [("profile", profile), ("run_id", runId), ("version", OptoLinkSoak.version)], 1)
        out.family("optolink_soak_elapsed_seconds", .gauge, help: "Seconds since the run started.")
        out.sample("optolink_soak_elapsed_seconds", shardLabel, elapsedSeconds)

        endpointFamilies(into: &out, shardLabel: shardLabel)
        runFamilies(into: &out, shardLabel: shardLabel)
        return out.text
    }

    /// The per-endpoint families: attempts by status, calls by outcome, the two latency
    /// histograms and the calls in flight.
    private func endpointFamilies(into out: inout PrometheusText, shardLabel: [(String, String)]) {
        let names = endpoints.keys.sorted()
        out.family(
            "optolink_soak_requests_total", .counter,
            help: "Finished HTTP attempts by endpoint and status (HTTP status, or the error kind when no response).")
        for name in names {
            for (status, count) in (endpoints[name]?.attemptsByStatus ?? [:]).sorted(by: { $0.key < $1.key }) {
                out.sample(
                    "optolink_soak_requests_total", shardLabel + [("endpoint", name), ("status", status)], Double(count)
                )
            }
        }
        out.family("optolink_soak_calls_total", .counter, help: "Finished SDK calls by endpoint and outcome.")
        for name in names {
            for (outcome, count) in (endpoints[name]?.callsByOutcome ?? [:]).sorted(by: { $0.key < $1.key }) {
                out.sample(
                    "optolink_soak_calls_total", shardLabel + [("endpoint", name), ("outcome", outcome)], Double(count))
            }
        }
        let histograms: [(String, String, KeyPath<Endpoint, Histogram>)] = [
            (
                "optolink_soak_attempt_latency_seconds",
                "Service time of one HTTP attempt (end - actual start), seconds.",
                \.attemptLatency
            ),
            (
                "optolink_soak_call_latency_seconds",
                "Whole SDK call from its intended start to its last attempt's end (back-off included), seconds.",
                \.callLatency
            ),
        ]
        for (family, help, path) in histograms {
            out.family(family, .histogram, help: help)
            for name in names {
                guard let h = endpoints[name]?[keyPath: path] else { continue }
                out.histogram(
                    family, shardLabel + [("endpoint", name)], bounds: Self.latencyBounds, cumulative: h.cumulative,
                    sum: h.sum,
                    count: h.count)
            }
        }
        out.family("optolink_soak_in_flight_calls", .gauge, help: "SDK calls with an HTTP attempt in flight.")
        for name in names {
            out.sample(
                "optolink_soak_in_flight_calls", shardLabel + [("endpoint", name)],
                Double(endpoints[name]?.inFlightCalls ?? 0))
        }
    }

    /// The run-wide families: 429s, errors, journeys by state, late starts and memory.
    private func runFamilies(into out: inout PrometheusText, shardLabel: [(String, String)]) {
        out.family("optolink_soak_429_total", .counter, help: "HTTP 429 responses (all endpoints).")
        out.sample("optolink_soak_429_total", shardLabel, Double(status429))
        out.family("optolink_soak_errors_total", .counter, help: "5xx responses plus attempts with no response.")
        out.sample("optolink_soak_errors_total", shardLabel, Double(errors))
        out.family(
            "optolink_soak_journeys_total", .counter,
            help: "Journeys by state: started, completed, unfinished, dropped.")
        out.sample("optolink_soak_journeys_total", shardLabel + [("state", "started")], Double(journeysStarted))
        out.sample("optolink_soak_journeys_total", shardLabel + [("state", "completed")], Double(journeysCompleted))
        out.sample("optolink_soak_journeys_total", shardLabel + [("state", "unfinished")], Double(journeysUnfinished))
        out.sample("optolink_soak_journeys_total", shardLabel + [("state", "dropped")], Double(journeysDropped))
        out.family("optolink_soak_journeys_in_flight", .gauge, help: "Journeys running now.")
        out.sample("optolink_soak_journeys_in_flight", shardLabel, Double(journeysInFlight))
        out.family(
            "optolink_soak_late_starts_total", .counter,
            help: "Journeys started more than the late threshold after their planned time (driver lateness).")
        out.sample("optolink_soak_late_starts_total", shardLabel, Double(lateStarts))
        out.family("optolink_soak_late_threshold_seconds", .gauge, help: "The late-start threshold, seconds.")
        out.sample("optolink_soak_late_threshold_seconds", shardLabel, lateThresholdSeconds)
        if let residentBytes {
            out.family("process_resident_memory_bytes", .gauge, help: "Resident memory of the soak process, bytes.")
            out.sample("process_resident_memory_bytes", shardLabel, Double(residentBytes))
        }
    }
}

extension LatencyHistogram {
    /// Observations at or below each bound (seconds, ascending), each bucket counted by its
    /// midpoint: the Prometheus `le` counts, within half a bucket width (< 0.4 %).
    func cumulativeCounts(atOrBelow bounds: [Double]) -> [UInt64] {
        var result = [UInt64](repeating: 0, count: bounds.count)
        for (index, c) in counts.enumerated() where c != 0 {
            let (low, width) = Self.bounds(of: index)
            let mid = (Double(low) + Double(width - 1) / 2) / 1e9
            for (i, bound) in bounds.enumerated() where mid <= bound { result[i] += c }
        }
        return result
    }

    /// This histogram in Prometheus form over ``LiveMetrics/latencyBounds``.
    var prometheus: LiveMetrics.Histogram {
        LiveMetrics.Histogram(
            cumulative: cumulativeCounts(atOrBelow: LiveMetrics.latencyBounds), sum: sum, count: count)
    }
}
