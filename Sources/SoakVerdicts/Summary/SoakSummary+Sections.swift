import Foundation
import SoakSupport
import SoakRecords

extension SoakSummary {
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
        /// The profile's `expect.lateStartLimit` (share of started journeys) the report judged the
        /// generator against; `nil` in merged reports and reports of older versions (the default then).
        package var lateStartLimit: Double? = nil

        /// A value with every stored property given (the memberwise initializer, for other targets).
        package init(
            scheduled: Int,
            started: Int,
            completed: Int,
            unfinished: Int,
            lateStarts: Int,
            lateThresholdSeconds: Double,
            startLag: HistogramSummary,
            byName: [String: Int],
            unfinishedByName: [String: Int] = [:],
            durationFromIntended: [String: HistogramSummary] = [:],
            waitedForDevice: Int? = nil,
            dropped: Int? = nil
        ) {
            self.scheduled = scheduled
            self.started = started
            self.completed = completed
            self.unfinished = unfinished
            self.lateStarts = lateStarts
            self.lateThresholdSeconds = lateThresholdSeconds
            self.startLag = startLag
            self.byName = byName
            self.unfinishedByName = unfinishedByName
            self.durationFromIntended = durationFromIntended
            self.waitedForDevice = waitedForDevice
            self.dropped = dropped
        }
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

        /// A value with every stored property given (the memberwise initializer, for other targets).
        package init(
            attempts: Int,
            calls: Int,
            byStatus: [String: Int],
            callOutcomes: [String: Int],
            attemptsPerCall: [String: Int],
            attemptLatency: HistogramSummary,
            attemptLatencyFromIntended: HistogramSummary,
            callLatency: HistogramSummary,
            requestBytes: Int,
            responseBytes: Int,
            offContractResponses: Int? = nil,
            firstOffContractBody: String? = nil
        ) {
            self.attempts = attempts
            self.calls = calls
            self.byStatus = byStatus
            self.callOutcomes = callOutcomes
            self.attemptsPerCall = attemptsPerCall
            self.attemptLatency = attemptLatency
            self.attemptLatencyFromIntended = attemptLatencyFromIntended
            self.callLatency = callLatency
            self.requestBytes = requestBytes
            self.responseBytes = responseBytes
            self.offContractResponses = offContractResponses
            self.firstOffContractBody = firstOffContractBody
        }
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

        /// A value with every stored property given (the memberwise initializer, for other targets).
        package init(
            attempts: Int,
            calls: Int,
            status429: Int,
            errors: Int,
            attemptsPerSecond: Double
        ) {
            self.attempts = attempts
            self.calls = calls
            self.status429 = status429
            self.errors = errors
            self.attemptsPerSecond = attemptsPerSecond
        }
    }

    package struct DeferredMatchSummary: Sendable, Codable {
        /// First launches that ran the deferred match.
        package var firstLaunches: Int
        /// Emitted deferred links by match method (`CLIPBOARD`, …), plus `NONE` for no link.
        package var byMethod: [String: Int]
        /// First launches whose device had clicked a link beforehand.
        package var clicked: Int

        /// A value with every stored property given (the memberwise initializer, for other targets).
        package init(
            firstLaunches: Int,
            byMethod: [String: Int],
            clicked: Int
        ) {
            self.firstLaunches = firstLaunches
            self.byMethod = byMethod
            self.clicked = clicked
        }
    }

    package struct ClickSummary: Sendable, Codable {
        package var count: Int
        package var byStatus: [String: Int]
        /// Clicks whose clipboard payload was put on the device's pasteboard.
        package var clipboardPlaced: Int
        package var latency: HistogramSummary

        /// A value with every stored property given (the memberwise initializer, for other targets).
        package init(
            count: Int,
            byStatus: [String: Int],
            clipboardPlaced: Int,
            latency: HistogramSummary
        ) {
            self.count = count
            self.byStatus = byStatus
            self.clipboardPlaced = clipboardPlaced
            self.latency = latency
        }
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

        package init(
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
        package static func group(_ routeCache: Bool) -> String { routeCache ? "cache_on" : "cache_off" }

        /// Opens of `phase` (every cache group when `group` is `nil`) with `outcome` (all when `nil`).
        package func count(_ phase: OpenPhase, group: String? = nil, _ outcome: OpenOutcome? = nil) -> Int {
            let groups = phases[phase.rawValue] ?? [:]
            return groups.filter { group == nil || $0.key == group }.values.reduce(0) { sum, byOutcome in
                sum + byOutcome.filter { outcome == nil || $0.key == outcome?.rawValue }.values.reduce(0, +)
            }
        }
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
