import Foundation
import SoakSupport
import SoakRecords

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

    /// A value with every stored property given (the memberwise initializer, for other targets).
    package init(
        result: RunResult? = nil,
        run: RunMetadata,
        journeys: JourneySummary,
        endpoints: [String: EndpointSummary],
        totals: Totals,
        deferredMatch: DeferredMatchSummary,
        clicks: ClickSummary,
        opens: OpenSummary,
        rss: [RSSSample],
        rssScope: String? = nil,
        timeline: [Interval] = [],
        intervalSeconds: Double = 1,
        server: ServerSummary? = nil,
        metrics: [String: Double],
        verdicts: VerdictsReport? = nil,
        thresholds: [ThresholdResult],
        notes: [String] = []
    ) {
        self.result = result
        self.run = run
        self.journeys = journeys
        self.endpoints = endpoints
        self.totals = totals
        self.deferredMatch = deferredMatch
        self.clicks = clicks
        self.opens = opens
        self.rss = rss
        self.rssScope = rssScope
        self.timeline = timeline
        self.intervalSeconds = intervalSeconds
        self.server = server
        self.metrics = metrics
        self.verdicts = verdicts
        self.thresholds = thresholds
        self.notes = notes
    }
}
