import Foundation
import OptoLinkStaging

/// The whole `summary.json` (every field documented in `Reports/README.md`).
/// Times are seconds; latencies are seconds in ``HistogramSummary``.
public struct SoakSummary: Sendable, Codable {
    /// The `schemaVersion` this version writes.
    public static let currentSchemaVersion = 1
    /// The report format's version; readers refuse versions they do not know.
    public var schemaVersion = SoakSummary.currentSchemaVersion
    /// The run's one-word outcome, matching its exit code: `passed` (0), `failed` (1), `invalid`
    /// (2), `interrupted` (130), `terminated` (143). `nil` in reports written before it existed.
    package var result: RunResult? = nil
    /// What ran, where, and how it ended.
    public var run: RunMetadata
    /// Journeys scheduled, started, completed and cut short, and their start lag.
    public var journeys: JourneySummary
    /// Per SDK endpoint (`match`, `session`, `events`, …).
    package var endpoints: [String: EndpointSummary]
    /// Attempt and call counts over the whole run.
    public var totals: Totals
    package var deferredMatch: DeferredMatchSummary
    package var clicks: ClickSummary
    package var opens: OpenSummary
    /// Resident memory of the soak process over time.
    package var rss: [RSSSample]
    /// What `rss` measures: with the embedded emulator the driver and the emulator share one
    /// process, so `bytes` is both, and each sample's `emulator` counts what the emulator holds.
    package var rssScope: String? = nil
    /// Per interval of `intervalSeconds`: what started and what came back (the knee of a ramp).
    package var timeline: [Interval] = []
    package var intervalSeconds: Double = 1
    /// What the backend itself reported (embedded emulator or `--ledger`), when known.
    package var server: ServerSummary?
    /// Flat metric name → value (seconds for latencies) that thresholds are evaluated on.
    public var metrics: [String: Double]
    /// The verdicts' report (`Verdicts.evaluate`): back-off, retry matrix, reconciliation,
    /// limit oracle, attribution.
    package var verdicts: VerdictsReport?
    /// Each threshold expression with its observed value and pass/fail (`Thresholds.evaluate`).
    public var thresholds: [ThresholdResult]
    /// Explanations the run could derive from its own records (why 429s were not retried,
    /// events refused because the device's session check-in was rate limited); empty when none.
    public var notes: [String] = []
    /// The histogram's stated relative precision of every percentile (0.01 = 1 %).
    public var histogramPrecision = LatencyHistogram.relativePrecision

    /// Identity and configuration of one run (`summary.json` `run`).
    public struct RunMetadata: Sendable, Codable {
        /// Unique id of the run (also the report directory's suffix).
        public var runId: String
        /// The profile's `name`.
        public var profile: String
        /// The profile file as given on the command line, when it came from a file.
        public var profilePath: String?
        /// ``OptoLinkSoak/version`` of the tool that wrote the report.
        public var soakVersion: String
        /// Wall-clock start, ISO 8601 in UTC.
        public var startedAt: String
        /// Unix epoch seconds of the run's time 0 (CSV times are relative to it).
        public var startEpoch: Double
        /// Seconds from time 0 to the end of the grace period.
        public var durationSeconds: Double
        /// `true` when SIGINT or SIGTERM ended the run (the report holds what was measured).
        public var interrupted: Bool
        /// `completed`, `duration`, `iterations`, `interrupted`, `deadline`.
        public var stopReason: StopReason
        /// `embedded` or `remote`.
        public var backend: String
        /// The backend's base URL (the embedded emulator's loopback address when `backend` is `embedded`).
        public var baseURL: String
        /// `open` (arrival rate) or `closed` (devices loop).
        public var loadModel: String
        /// Number of virtual devices.
        public var devices: Int
        /// Seed of the plan: device attributes, journey choice and think times.
        public var seed: UInt64
        /// SHA-256 of the effective profile without its pass/fail sections (``ProfileFingerprint``):
        /// `compare` refuses runs whose fingerprints differ. Absent in reports of older versions.
        public var profileHash: String? = nil
        /// The HTTP stack the SDK's requests went through: `native` or `urlsession` (absent in
        /// reports written before the native transport existed).
        public var transport: String? = nil
        /// Set when the report is one shard of a plan (`run --shard`) or a merge of shards
        /// (`merge`, `run --processes`); absent for a plain run.
        package var shards: Sharding? = nil
        /// How far the recording fell behind the requests (absent when the run recorded inline,
        /// and in reports of older versions).
        public var recording: RecordingLag? = nil
    }

    /// The recorder's writer thread in one run: attempts and calls are applied there, after the
    /// requests, so the live figures lag by the events waiting.
    public struct RecordingLag: Sendable, Codable, Equatable {
        /// The most attempt and call events that waited at once to be applied.
        public var backlogPeak: Int
        /// Seconds it took, once the run ended, to apply what was still waiting.
        public var drainSeconds: Double

        public init(backlogPeak: Int, drainSeconds: Double) {
            self.backlogPeak = backlogPeak
            self.drainSeconds = drainSeconds
        }
    }

    /// How a report relates to the shards of its plan.
    package struct Sharding: Sendable, Codable, Equatable {
        /// Shards the plan was split into.
        package var count: Int
        /// A shard's report: its 0-based index. `nil` in a merged report.
        package var index: Int?
        /// The shared start (`--start-at`), Unix seconds, when one was given.
        package var startAt: Double?
        /// A shard's report: seconds it started after `startAt` (its journeys planned before
        /// then started late and count as late starts).
        package var lateSeconds: Double?
        /// A merged report: the shard indexes merged, ascending.
        package var merged: [Int]?
        /// A merged report: the shard indexes that were missing (`merge --allow-partial`).
        package var missing: [Int]?
        /// A merged report: whether the records were streamed in time order from the shards'
        /// CSVs (`true`), or sorted in memory because a shard's rows were too far out of order.
        package var streamed: Bool?
        /// A merged report: the reorder window the streamed records needed, seconds (rows of a
        /// shard lag behind each other by up to this much in its CSVs).
        package var reorderWindowSeconds: Double?

        package init(count: Int, index: Int? = nil) {
            self.count = count
            self.index = index
        }
    }

    /// Journey counts (`summary.json` `journeys`); times in seconds.
    public struct JourneySummary: Sendable, Codable {
        /// Journeys the plan scheduled within the run's duration.
        public var scheduled: Int
        /// Journeys that started.
        public var started: Int
        /// Journeys whose every step ran to its end.
        public var completed: Int
        /// Journeys the run cut short: a step never started (the step window closed, the run
        /// stopped) or a step's work was cancelled at the cutoff. A journey counts as completed
        /// only when every step ran to its end.
        public var unfinished: Int
        /// Journeys that started later than `lateThresholdSeconds` after their intended start.
        public var lateStarts: Int
        /// Start lag, in seconds, above which a start counts as late.
        public var lateThresholdSeconds: Double
        /// Actual minus intended start of every journey (open model; 0 in the closed model).
        public var startLag: HistogramSummary
        /// Journeys started, per journey name.
        public var byName: [String: Int]
        /// Unfinished journeys, per journey name.
        public var unfinishedByName: [String: Int] = [:]
        /// Per journey name, completed journeys only: seconds from the journey's intended start
        /// (its planned arrival, open model) to the end of its last step, so a stall anywhere
        /// in the journey, or a late start, is in it (metrics `journey.<name>.duration.<p>`).
        public var durationFromIntended: [String: HistogramSummary] = [:]
        /// Journeys that found every device busy and started when one freed up (open model);
        /// `nil` in reports written before this field existed.
        public var waitedForDevice: Int?
        /// Arrivals the open model planned that never started: they waited for a `maxInFlight`
        /// slot or a device until the run ended (k6's `dropped_iterations`). `nil` in the closed
        /// model, which plans no arrivals and so drops none, and in reports written before it.
        public var dropped: Int? = nil
    }

    package struct EndpointSummary: Sendable, Codable {
        package var attempts: Int
        package var calls: Int
        /// Attempt count by HTTP status (`"201"`) or error kind (`"timed_out"`).
        package var byStatus: [String: Int]
        /// Call count by outcome (`ok`, `api_error`, `connection_error`, `unfinished`).
        package var callOutcomes: [String: Int]
        /// Number of calls by attempts they took (`"1"`, `"2"`, …).
        package var attemptsPerCall: [String: Int]
        /// Attempt service time: end − actual start.
        package var attemptLatency: HistogramSummary
        /// End − intended start (first attempts carry the step's scheduled time).
        package var attemptLatencyFromIntended: HistogramSummary
        /// Call time from intended start to the last attempt's end, back-off included.
        package var callLatency: HistogramSummary
        package var requestBytes: Int
        package var responseBytes: Int
        /// Attempts answered with the success status but a body off the contract (not a JSON
        /// object; `/match` without `matched`, `/data` without `path`); counted in `failed`.
        /// `nil` in reports written before it was counted.
        package var offContractResponses: Int? = nil
        /// The first of those bodies (at most 512 bytes, as text), for the user to see what came back.
        package var firstOffContractBody: String? = nil
    }

    /// Counts over every endpoint (`summary.json` `totals`).
    public struct Totals: Sendable, Codable {
        /// HTTP attempts, retries included.
        public var attempts: Int
        /// Public SDK calls (one call may take several attempts).
        public var calls: Int
        /// Attempts answered 429 Too Many Requests.
        public var status429: Int
        /// 5xx responses plus attempts with no response.
        public var errors: Int
        /// Attempts per second over the active part of the run.
        public var attemptsPerSecond: Double
    }

    package struct DeferredMatchSummary: Sendable, Codable {
        /// First launches that ran the deferred match.
        package var firstLaunches: Int
        /// Emitted deferred links by match method (`CLIPBOARD`, …), plus `NONE` for no link.
        package var byMethod: [String: Int]
        /// First launches whose device had clicked a link beforehand.
        package var clicked: Int
    }

    package struct ClickSummary: Sendable, Codable {
        package var count: Int
        package var byStatus: [String: Int]
        /// Clicks whose clipboard payload was put on the device's pasteboard.
        package var clipboardPlaced: Int
        package var latency: HistogramSummary
    }

    package struct OpenSummary: Sendable, Codable {
        package var count: Int
        /// Opens whose link was emitted on `links` within the step's bound.
        package var emitted: Int
        package var timedOut: Int
        /// `handle(url:)` to emission.
        package var latency: HistogramSummary
        /// Opens by ``OpenOutcome`` (`resolved`, `cached`, `raw`, `timed_out`, `cancelled_by_run`);
        /// absent in reports written before it existed.
        package var byOutcome: [String: Int]? = nil
        /// Opens that got no link at all (timed out or cut by the run's end).
        package var lost: Int? = nil
        /// The Universal Link opens around the profile's `/data` outage; absent without one.
        package var outage: OutageOpenSummary? = nil

        package init(count: Int, emitted: Int, timedOut: Int, latency: HistogramSummary) {
            self.count = count
            self.emitted = emitted
            self.timedOut = timedOut
            self.latency = latency
        }
    }

    /// Universal Link opens before, during and after the profile's `/data` outage windows.
    package struct OutageOpenSummary: Sendable, Codable {
        /// The windows, run seconds `start <= t < end`, with their mode (`refuse`, `reset`).
        package var windows: [OutagePlan.Window]
        /// The SDK's worst case for one `/data` call, seconds: every attempt's timeout plus every
        /// back-off wait. An open is `during` when it starts in a window and this much later is
        /// still inside it.
        package var worstCaseSeconds: Double
        /// Phase (`before`, `during`, `after`, `edge`) → `cache_on` / `cache_off` → outcome → opens.
        package var phases: [String: [String: [String: Int]]]
        /// `handle(url:)` to the link for opens `during` an outage that got one, seconds.
        package var timeToLink: HistogramSummary
        /// The same, by `cache_on` / `cache_off`.
        package var timeToLinkByCache: [String: HistogramSummary]
        /// Opens `during` an outage whose link took longer than the worst case (or never came).
        package var overWorstCase: Int

        init(
            plan: OutagePlan, opens: [OpenPhase: [Bool: [OpenOutcome: Int]]], timeToLink: LatencyHistogram,
            timeToLinkByCache: [Bool: LatencyHistogram], overWorstCase: Int
        ) {
            windows = plan.windows
            worstCaseSeconds = plan.worstCaseSeconds
            var phases: [String: [String: [String: Int]]] = [:]
            for phase in OpenPhase.allCases {
                for cache in [true, false] {
                    let counts = opens[phase]?[cache] ?? [:]
                    phases[phase.rawValue, default: [:]][Self.group(cache)] = Dictionary(
                        uniqueKeysWithValues: OpenOutcome.allCases.map { ($0.rawValue, counts[$0] ?? 0) })
                }
            }
            self.phases = phases
            self.timeToLink = HistogramSummary(timeToLink)
            var byCache: [String: HistogramSummary] = [:]
            for cache in [true, false] {
                byCache[Self.group(cache)] = HistogramSummary(timeToLinkByCache[cache] ?? LatencyHistogram())
            }
            self.timeToLinkByCache = byCache
            self.overWorstCase = overWorstCase
        }

        /// `cache_on` or `cache_off`.
        static func group(_ routeCache: Bool) -> String { routeCache ? "cache_on" : "cache_off" }

        /// Opens of `phase` (every cache group when `group` is `nil`) with `outcome` (all when `nil`).
        package func count(_ phase: OpenPhase, group: String? = nil, _ outcome: OpenOutcome? = nil) -> Int {
            let groups = phases[phase.rawValue] ?? [:]
            return groups.filter { group == nil || $0.key == group }.values.reduce(0) { sum, byOutcome in
                sum + byOutcome.filter { outcome == nil || $0.key == outcome?.rawValue }.values.reduce(0, +)
            }
        }
    }

    package struct Interval: Sendable, Codable, Equatable {
        /// Interval start, seconds since run start.
        package var t: Double
        /// Journeys started in the interval, and those started late.
        package var journeys: Int
        package var lateStarts: Int
        /// Arrivals planned in the interval that never started (0 in the closed model).
        package var dropped: Int? = nil
        /// Attempts that started in the interval, their 429s and errors (5xx + no response).
        package var attempts: Int
        package var status429: Int
        package var errors: Int
        /// Mean and max of `end − intended_start` of those attempts, seconds.
        package var meanLatencyFromIntended: Double
        package var maxLatencyFromIntended: Double
        /// Resident bytes of the soak process at the interval's last RSS sample (absent when
        /// no sample fell in it).
        package var rssBytes: Int? = nil
    }

    package struct RSSSample: Sendable, Codable, Equatable {
        /// Seconds since run start.
        package var t: Double
        /// Resident bytes of the soak process (`VmRSS`).
        package var bytes: Int
        /// With the embedded emulator: what it held at that moment (absent otherwise).
        package var emulator: StagingRetained? = nil
    }

    package struct ServerSummary: Sendable, Codable {
        /// The emulator's request counters, verbatim.
        package var counters: JSONValue?
        package var ledgerEntries: Int?
    }
}

extension SoakSummary.JourneySummary {
    /// Decodes a `journeys` object; the per-name breakdowns (`unfinishedByName`,
    /// `durationFromIntended`) are optional, so `compare` still reads a baseline written before
    /// they existed (same `schemaVersion`).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        scheduled = try c.decode(Int.self, forKey: .scheduled)
        started = try c.decode(Int.self, forKey: .started)
        completed = try c.decode(Int.self, forKey: .completed)
        unfinished = try c.decode(Int.self, forKey: .unfinished)
        lateStarts = try c.decode(Int.self, forKey: .lateStarts)
        lateThresholdSeconds = try c.decode(Double.self, forKey: .lateThresholdSeconds)
        startLag = try c.decode(HistogramSummary.self, forKey: .startLag)
        byName = try c.decode([String: Int].self, forKey: .byName)
        unfinishedByName = try c.decodeIfPresent([String: Int].self, forKey: .unfinishedByName) ?? [:]
        durationFromIntended =
            try c.decodeIfPresent([String: HistogramSummary].self, forKey: .durationFromIntended) ?? [:]
        waitedForDevice = try c.decodeIfPresent(Int.self, forKey: .waitedForDevice)
        dropped = try c.decodeIfPresent(Int.self, forKey: .dropped)
    }
}

extension SoakSummary {
    /// Reads a report's `summary.json`: give the report directory, or the `summary.json` in it.
    /// - Throws: ``SoakReportError`` naming the path: missing, not JSON, an unknown
    ///   `schemaVersion`, or a field that does not decode.
    public static func load(contentsOf url: URL) throws -> SoakSummary {
        let directory = url.lastPathComponent == "summary.json" ? url.deletingLastPathComponent() : url
        return try SoakReportDirectory.load(directory).summary
    }
}
