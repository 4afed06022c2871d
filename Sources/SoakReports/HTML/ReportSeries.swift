import Foundation
import SoakRecords
import SoakVerdicts

/// The plotted data of one run, derived from its `summary.json` and (when available) its
/// `attempts.csv`: everything bounded so a one-hour run's page stays small.
struct ReportSeries {
    /// At most this many points in a point series; early back-offs and too-lenient windows are always kept.
    static let maxPoints = 3000

    struct Latency {
        var endpoint: String
        /// Per interval start (s): p50, p95, p99 of attempt latency (s).
        var p50: [(x: Double, y: Double)] = []
        var p95: [(x: Double, y: Double)] = []
        var p99: [(x: Double, y: Double)] = []
    }

    struct Backoff {
        /// (asked N seconds, taken seconds) of 429s whose call retried.
        var onTime: [(x: Double, y: Double)] = []
        var early: [(x: Double, y: Double)] = []
        /// 429s with `N` whose call made no further attempt.
        var notRetried = 0
        var total = 0
        var shown = 0
    }

    struct LimitWindows {
        var bucket: String
        var limit: Int
        var description: String
        /// (window start s, requests the limiter let through in it).
        var within: [(x: Double, y: Double)] = []
        var over: [(x: Double, y: Double)] = []
        var windows = 0
    }

    package var label: String
    package var summary: SoakSummary
    package var attemptsPerSecond: [(x: Double, y: Double)] = []
    var status429PerSecond: [(x: Double, y: Double)] = []
    var errorsPerSecond: [(x: Double, y: Double)] = []
    var lateStartsPerSecond: [(x: Double, y: Double)] = []
    /// Start lag (s) → fraction of journeys started within it.
    var startLagCDF: [(x: Double, y: Double)] = []
    var rssMB: [(x: Double, y: Double)] = []
    package var latency: [Latency] = []
    package var backoff = Backoff()
    package var limits: [LimitWindows] = []
    /// False when `attempts.csv` could not be read (latency over time, back-off and windows are then empty).
    var hasAttempts = false

    init(label: String, summary: SoakSummary, attempts: [AttemptRecord]?, earlySlackSeconds: Double = 0.001) {
        self.label = label
        self.summary = summary
        let interval = max(summary.intervalSeconds, 0.001)
        for row in summary.timeline {
            attemptsPerSecond.append((row.t, Double(row.attempts) / interval))
            status429PerSecond.append((row.t, Double(row.status429) / interval))
            errorsPerSecond.append((row.t, Double(row.errors) / interval))
            lateStartsPerSecond.append((row.t, Double(row.lateStarts) / interval))
        }
        rssMB = summary.rss.map { ($0.t, Double($0.bytes) / 1_048_576) }
        var seen = 0.0
        let lagTotal = Double(summary.journeys.startLag.count)
        if lagTotal > 0 {
            for bucket in summary.journeys.startLag.bucketPairs {
                seen += bucket.count
                startLagCDF.append((bucket.value, seen / lagTotal))
            }
        }
        guard let attempts else { return }
        hasAttempts = true
        latency = Self.latencyOverTime(attempts, interval: interval)
        backoff = Self.backoff(attempts, slack: earlySlackSeconds)
        if let verdicts = summary.verdicts {
            limits = Self.limitWindows(attempts, verdict: verdicts.limits)
        }
    }

    static func latencyOverTime(_ attempts: [AttemptRecord], interval: Double) -> [Latency] {
        var cells: [ContractEndpoint: [Int: [Double]]] = [:]
        // Times a hand-edited or damaged CSV can hold (nan, inf, 1e300) are left out of the chart.
        for a in attempts
        where a.status != nil && RunSeconds.isPlausible(a.actualStart) && RunSeconds.isPlausible(a.end) {
            cells[a.endpoint, default: [:]][Int(a.actualStart / interval), default: []].append(a.end - a.actualStart)
        }
        func rank(_ sorted: [Double], _ p: Double) -> Double {
            sorted[max(0, min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1))]
        }
        return cells.keys.sorted { $0.rawValue < $1.rawValue }.map { endpoint in
            var series = Latency(endpoint: endpoint.rawValue)
            for (slot, values) in (cells[endpoint] ?? [:]).sorted(by: { $0.key < $1.key }) {
                let sorted = values.sorted()
                let t = Double(slot) * interval
                series.p50.append((t, rank(sorted, 0.5)))
                series.p95.append((t, rank(sorted, 0.95)))
                series.p99.append((t, rank(sorted, 0.99)))
            }
            return series
        }
    }

    package static func backoff(_ attempts: [AttemptRecord], slack: Double) -> Backoff {
        struct Key: Hashable {
            package var device: String
            package var launch: Int
            package var callId: UInt64
        }
        var calls: [Key: [AttemptRecord]] = [:]
        for a in attempts { calls[Key(device: a.device, launch: a.launch, callId: a.callId), default: []].append(a) }
        var result = Backoff()
        var onTime: [(x: Double, y: Double)] = []
        for (_, rows) in calls {
            let ordered = rows.sorted { $0.attempt < $1.attempt }
            for (index, a) in ordered.enumerated() where a.status == 429 {
                guard let asked = a.retryAfterSeconds else { continue }
                result.total += 1
                guard index + 1 < ordered.count else {
                    result.notRetried += 1
                    continue
                }
                let taken = ordered[index + 1].actualStart - a.end
                if taken < Double(asked) - slack {
                    result.early.append((Double(asked), taken))
                } else {
                    onTime.append((Double(asked), taken))
                }
            }
        }
        // Keep every early one; thin the on-time ones evenly (sorted first, so the page is stable).
        onTime.sort { ($0.x, $0.y) < ($1.x, $1.y) }
        let room = max(0, maxPoints - result.early.count)
        if onTime.count > room {
            let step = Double(onTime.count) / Double(max(room, 1))
            onTime = (0..<room).map { onTime[Int(Double($0) * step)] }
        }
        result.onTime = onTime
        result.shown = onTime.count + result.early.count
        return result
    }

    /// Per declared bucket: the requests the limiter let through in each window, windows opened
    /// at a key's first hit and lasting the window (fixed window), or — for the sliding window —
    /// the accepted requests in the window before each hit. Bounded to ``maxPoints`` by keeping
    /// the fullest window per start second.
    static func limitWindows(_ attempts: [AttemptRecord], verdict: LimitOracleVerdict) -> [LimitWindows] {
        var result: [LimitWindows] = []
        for (name, bucket) in verdict.buckets.sorted(by: { $0.key < $1.key }) {
            let members = Set(bucket.endpoints)
            let declared = bucket.declared
            var byKey: [String: [AttemptRecord]] = [:]
            for a in attempts where members.contains(a.endpoint) && a.status != nil {
                byKey[declared.scope == .ip ? (a.clientIP ?? "socket-peer") : "api-key", default: []].append(a)
            }
            var windows = LimitWindows(bucket: name, limit: declared.limit, description: declared.description)
            var points: [(x: Double, y: Double)] = []
            for (_, hits) in byKey {
                let sorted = hits.sorted { $0.actualStart < $1.actualStart }
                switch verdict.algorithm {
                case .fixedWindow:
                    var start: Double? = nil
                    var passed = 0
                    for hit in sorted {
                        if let s = start, hit.actualStart < s + declared.windowSeconds {
                            if hit.status != 429 { passed += 1 }
                        } else {
                            if let s = start { points.append((s, Double(passed))) }
                            start = hit.actualStart
                            passed = hit.status != 429 ? 1 : 0
                        }
                    }
                    if let s = start { points.append((s, Double(passed))) }
                case .slidingWindow:
                    let accepted = sorted.filter { $0.status != 429 }.map(\.actualStart)
                    var low = 0
                    for (high, t) in accepted.enumerated() {
                        while low < high, accepted[low] <= t - declared.windowSeconds { low += 1 }
                        points.append((t, Double(high - low + 1)))
                    }
                }
            }
            windows.windows = points.count
            if points.count > maxPoints {
                // The fullest window per time bin, bins wide enough for at most maxPoints of them.
                let span = (points.map(\.x).max() ?? 0) - (points.map(\.x).min() ?? 0)
                let bin = max(1, span / Double(maxPoints - 1))
                var fullest: [Int: (x: Double, y: Double)] = [:]
                for p in points where RunSeconds.isPlausible(p.x) && (fullest[Int(p.x / bin)]?.y ?? -1) < p.y {
                    fullest[Int(p.x / bin)] = p
                }
                points = fullest.values.sorted { $0.x < $1.x }
            }
            windows.within = points.filter { $0.y <= Double(declared.limit) }
            windows.over = points.filter { $0.y > Double(declared.limit) }
            result.append(windows)
        }
        return result
    }
}
