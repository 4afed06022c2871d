import SoakRecords

/// One judgement over a run: a single pass over the run's records in time order, then a
/// result that carries its own metrics, report lines and JSON (`summary.json` `verdicts.<key>`).
///
/// Adding a verdict is one file with a type conforming to this protocol, plus one line in
/// ``Verdicts/registry``. The compiler then asks for everything the report needs: the JSON key,
/// the metric names (the threshold catalogue is built from them), the pass, the metrics, the
/// report lines and what "not exercised" means for it.
///
/// A pass never needs the whole run at once: it sees each ``RunRecord`` once, in time order
/// (an attempt at its end, a call after its last attempt), so the same code judges a run from
/// memory, from its CSVs on disk, or from several shards merged by time.
package protocol Verdict: Sendable, Codable, Equatable {
    /// The pass that builds this verdict.
    associatedtype Pass: VerdictPass where Pass.Output == Self

    /// The key of this verdict in `summary.json`'s `verdicts` object (`backoff`, `limits`, …).
    static var key: String { get }

    /// Every metric name the verdict can emit, as patterns (see ``MetricPattern``).
    static var metricPatterns: [MetricPattern] { get }

    /// A fresh pass over one run.
    static func makePass(_ context: VerdictContext) -> Pass

    /// Adds the verdict's flat metrics (`backoff.early`, …): counts as plain numbers, seconds, rates in 0…1.
    func addMetrics(to metrics: inout [String: Double])

    /// The verdict as a few human-readable report lines.
    func summaryLines() -> [String]

    /// Metric-name prefixes (`backoff`, `backoff.429`, `limits.match`) over which the verdict
    /// judged nothing, with the reason in words. A threshold on such a metric reports
    /// "not exercised" and fails unless the profile marks it optional.
    var notExercised: [String: String] { get }
}

/// The incremental half of a ``Verdict``: fed every record once, in time order, then finished.
package protocol VerdictPass {
    associatedtype Output

    /// Takes the next record of the run (attempts and calls in time order; attribution
    /// records at any point).
    mutating func consume(_ record: RunRecord)

    /// Judges what is still open and returns the verdict.
    mutating func finish() -> Output
}

/// One record of a run as the verdict passes see it.
package enum RunRecord: Sendable, Equatable {
    /// One HTTP attempt (a row of `attempts.csv`); its stream time is its end.
    case attempt(AttemptRecord)
    /// One public call (a row of `calls.csv`); it comes after every attempt of the call.
    case call(CallRecord)
    /// One first launch's deferred-match result (no time order).
    case attribution(AttributionRecord)
    /// One row of the server's ledger; its stream time is its arrival (`arrivedAt` minus the
    /// run's start). Rows may come live, in time order with the rest, or all at the end (a
    /// remote backend's `--ledger FILE`); see ``VerdictContext/horizonSeconds``.
    case ledger(LedgerRow)
}

/// What a pass may know besides the records: the profile's `expect` section, the SDK's retry
/// budget, the server's ledger and how the run's virtual devices map to SDK `deviceId`s.
package struct VerdictContext: Sendable {
    package var configuration: VerdictsConfiguration
    /// The SDK's `maxRetries` (docs/CONTRACT.md §2: default 2, so at most 3 attempts per call).
    package var maxRetries: Int
    /// The server's ledger of accepted writes known before the pass starts, or `nil`.
    package var ledger: [LedgerRow]?
    /// Whether ledger rows come in the stream as ``RunRecord/ledger(_:)`` records (the ledger
    /// is then available even when ``ledger`` is `nil`).
    package var ledgerStreamed: Bool
    /// Whether streamed ledger rows come live, in time order with the calls (the embedded
    /// emulator); otherwise they may all come at the end and reconciliation keeps every call.
    package var ledgerLive: Bool
    /// How long, in seconds of stream time, a pass keeps what a later record could still change:
    /// the longest a call (all its attempts and back-offs) or an attempt can last, plus margin.
    /// State older than this is judged and dropped, so memory depends on this horizon and the
    /// rate, not on the run's length. `infinity` (the default) keeps everything to the end,
    /// which a stream needs when its ledger rows come only after every call.
    package var horizonSeconds: Double
    /// The run's start, seconds since the Unix epoch.
    package var runStartEpoch: Double
    /// Virtual device → SDK `deviceId` of its latest install (see ``VerdictInputs/deviceIds``).
    package var deviceIds: [String: String]
    /// The SDK `deviceId` each launch used (a reinstall changes it).
    package var launchDeviceIds: [DeviceLaunch: String]
    /// Whether every rate-limit bucket is known to be empty when the run starts: the run's own
    /// embedded emulator, started for it. Then no 429 can be use of a bucket before the run, and
    /// the limit oracle judges one that too few of the run's hits explain as too strict, whatever
    /// its `N` says (``LimitOracleVerdict``'s use before the run applies to a remote backend only).
    package var bucketsStartEmpty = false
    /// Whether the ledger was read from a file after the run (`--ledger FILE`), which the backend
    /// may not have finished writing: reconciliation then checks that it reaches the run's last
    /// successful write and calls the successful calls past its end not covered, not lost.
    package var ledgerMayLag = false

    package init(
        configuration: VerdictsConfiguration = VerdictsConfiguration(), maxRetries: Int = 2,
        ledger: [LedgerRow]? = nil, runStartEpoch: Double = 0, deviceIds: [String: String] = [:],
        launchDeviceIds: [DeviceLaunch: String] = [:], ledgerStreamed: Bool = false, ledgerLive: Bool = false,
        horizonSeconds: Double = .infinity
    ) {
        self.ledgerLive = ledgerLive
        self.configuration = configuration
        self.maxRetries = maxRetries
        self.ledger = ledger
        self.ledgerStreamed = ledgerStreamed
        self.horizonSeconds = horizonSeconds.isNaN ? .infinity : max(0, horizonSeconds)
        self.runStartEpoch = runStartEpoch
        self.deviceIds = deviceIds
        self.launchDeviceIds = launchDeviceIds
    }

    /// A horizon for a run of `profile`, seconds: the longest a call can take (every attempt timing
    /// out, the longest back-off or `Retry-After` between them, a `Retry-After` being at most the
    /// longest window) plus the longest the recorder waits before it closes a call nobody closed
    /// (``SoakRecorder/quietCloseDeadline(after:margin:)``: that back-off again plus 10 s), at least
    /// 2 minutes. So every call reaches the passes within a horizon of its first ledger row.
    package static func horizon(timeout: Double, maxRetries: Int, longestWindow: Double) -> Double {
        let attempts = Double(max(0, maxRetries) + 1)
        let backoff = max(60, longestWindow)
        return max(
            120,
            attempts * (max(0, timeout) + 5) + Double(max(0, maxRetries)) * backoff + max(60, longestWindow + 10))
    }

    /// Whether the run has a ledger to reconcile against.
    package var ledgerAvailable: Bool { ledger != nil || ledgerStreamed }
}

extension RunRecord {
    /// The record's stream time in run seconds (`nil` for attribution records, which have none).
    package func streamTime(runStartEpoch: Double) -> Double? {
        switch self {
        case .attempt(let attempt): attempt.end
        case .call(let call): call.end
        case .attribution: nil
        case .ledger(let entry): entry.arrivedAt - runStartEpoch
        }
    }
}

/// A pattern of metric names, one ``Segment`` per `.`-separated part: `backoff.<count>`,
/// `limits.<any bucket>.<finding>`.
package struct MetricPattern: Sendable, CustomStringConvertible {
    /// One part of a metric name.
    package enum Segment: Sendable {
        /// Exactly this text.
        case literal(String)
        /// One of these texts.
        case oneOf([String])
        /// Any non-empty name (a declared limit bucket).
        case anyName

        func matches(_ text: String) -> Bool {
            switch self {
            case .literal(let value): return value == text
            case .oneOf(let values): return values.contains(text)
            case .anyName: return !text.isEmpty
            }
        }

        /// The spelling of this segment closest to `text` (for "did you mean").
        func closest(to text: String) -> String {
            switch self {
            case .literal(let value): return value
            case .oneOf(let values): return values.min { editDistance($0, text) < editDistance($1, text) } ?? text
            case .anyName: return text
            }
        }

        /// Every spelling (`anyName` as `<name>`).
        var spellings: [String] {
            switch self {
            case .literal(let value): return [value]
            case .oneOf(let values): return values
            case .anyName: return ["<name>"]
            }
        }
    }

    /// What a metric's value measures, which decides the units a threshold may write.
    package enum Unit: String, Sendable {
        /// A count of things (`backoff.early`, `http.429`): a plain number.
        case count
        /// A fraction in 0…1 (`http.errors.rate`): a plain number or `%`.
        case ratio
        /// Seconds (latencies, gaps): a plain number of seconds, `ms` or `s`.
        case seconds
        /// Bytes (`rss.max_bytes`): a plain number.
        case bytes
        /// Per second (`http.requests_per_second`): a plain number.
        case perSecond = "per_second"
        /// MiB per hour (`rss.growth_mb_per_hour`): a plain number.
        case megabytesPerHour = "mb_per_hour"
    }

    package var segments: [Segment]
    package var unit: Unit

    package init(_ segments: [Segment], unit: Unit = .count) {
        self.segments = segments
        self.unit = unit
    }

    /// Builds a pattern from parts: a `String` is a literal, a `[String]` one of a set, and
    /// ``MetricPatternPart/cases(of:)`` stands for a vocabulary enum's cases.
    package init(_ parts: MetricPatternPart..., unit: Unit = .count) {
        segments = parts.map(\.segment)
        self.unit = unit
    }

    /// Whether `parts` (a metric name split at `.`) fits.
    package func matches(_ parts: [String]) -> Bool {
        segments.count == parts.count && zip(segments, parts).allSatisfy { $0.matches($1) }
    }

    package var description: String {
        segments.map { segment in
            let spellings = segment.spellings
            return spellings.count == 1 ? spellings[0] : "{" + spellings.joined(separator: ",") + "}"
        }.joined(separator: ".")
    }
}

/// One part of a ``MetricPattern`` written inline.
package struct MetricPatternPart: Sendable, ExpressibleByStringLiteral, ExpressibleByArrayLiteral {
    package let segment: MetricPattern.Segment

    package init(stringLiteral value: String) { segment = .literal(value) }
    package init(arrayLiteral elements: String...) { segment = .oneOf(elements) }
    init(_ segment: MetricPattern.Segment) { self.segment = segment }

    /// Any of `values`.
    package static func oneOf(_ values: [String]) -> MetricPatternPart { .init(.oneOf(values)) }
    /// Any case of a vocabulary enum, by raw value.
    package static func cases<E: CaseIterable & RawRepresentable>(of type: E.Type) -> MetricPatternPart
    where E.RawValue == String {
        .init(.oneOf(type.allCases.map(\.rawValue)))
    }
    /// Any non-empty name (a declared limit bucket).
    package static let anyName = MetricPatternPart(.anyName)
}
