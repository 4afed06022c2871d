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

    /// Every retry the back-off verdict judged, as (wait taken − wait asked in ms, wait asked in s).
    struct Backoff {
        var early: [(x: Double, y: Double)] = []
        var onTime: [(x: Double, y: Double)] = []
        var late: [(x: Double, y: Double)] = []
        /// Judged retries, and those after a 429 that carried `N`.
        var judged = 0
        var afterRetryAfter = 0
        /// Retries thinned out of `onTime` and `late` to keep the page small (never an early one).
        var thinned = 0
        /// 429s with `N` whose call made no further attempt.
        var notRetried = 0
        /// The boundaries the points were judged with.
        var tolerances = BackoffTolerances()
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

    /// Seconds from the run's start to its end (grace period included), or to the latest time a
    /// time series reaches when that is later: the right end of this run's time axis.
    var timeSpan: Double {
        let times =
            [attemptsPerSecond, rssMB] + latency.flatMap { [$0.p50, $0.p95, $0.p99] }
            + limits.flatMap { [$0.within, $0.over] }
        let latest = times.flatMap { $0.map(\.x) }.filter(RunSeconds.isPlausible).max() ?? 0
        let duration = RunSeconds.isPlausible(summary.run.durationSeconds) ? summary.run.durationSeconds : 0
        return max(duration, latest)
    }

    init(
        label: String, summary: SoakSummary, attempts: [AttemptRecord]?,
        backoff tolerances: BackoffTolerances = BackoffTolerances()
    ) {
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
        backoff = Self.backoff(attempts, tolerances: tolerances)
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

    /// The judged retries of `attempts` (``JudgedRetry``, the back-off verdict's own definition),
    /// each placed at its deviation from the asked wait in ms and, on the y axis, the wait asked
    /// in seconds spread over ±0.2 s so equal deviations do not hide each other. Every early retry
    /// is kept; on-time and late ones are thinned evenly to ``maxPoints`` in all.
    package static func backoff(_ attempts: [AttemptRecord], tolerances: BackoffTolerances) -> Backoff {
        var result = Backoff(tolerances: tolerances)
        // Only calls with a second attempt have retries to judge: the others are counted in one
        // pass without a list of their own (most calls of a run have one attempt).
        var retried = Set<CallKey>()
        for a in attempts where a.attempt > 1 { retried.insert(CallKey(a)) }
        var calls: [CallKey: [AttemptRecord]] = [:]
        for a in attempts {
            let key = CallKey(a)
            if retried.contains(key) {
                calls[key, default: []].append(a)
            } else if a.status == 429, a.retryAfterSeconds != nil {
                result.notRetried += 1
            }
        }
        var onTime: [(x: Double, y: Double)] = []
        var late: [(x: Double, y: Double)] = []
        for key in calls.keys.sorted() {
            let ordered = (calls[key] ?? []).sorted { $0.attempt < $1.attempt }
            if let last = ordered.last, last.status == 429, last.retryAfterSeconds != nil { result.notRetried += 1 }
            for retry in JudgedRetry.retries(of: ordered)
            where RunSeconds.isPlausible(retry.gapSeconds) {
                result.judged += 1
                if retry.cause == .rateLimited { result.afterRetryAfter += 1 }
                // A low-discrepancy spread in −0.2…0.2 s: the same input gives the same page.
                let spread = (Double(result.judged) * 0.618_033_988_75).truncatingRemainder(dividingBy: 1) * 0.4 - 0.2
                let point = (x: retry.excessSeconds * 1000, y: retry.expectedSeconds + spread)
                switch retry.judgement(
                    earlySlackSeconds: tolerances.earlySlackSeconds, toleranceSeconds: tolerances.lateToleranceSeconds)
                {
                case .early: result.early.append(point)
                case .onTime: onTime.append(point)
                case .late: late.append(point)
                }
            }
        }
        let room = max(0, maxPoints - result.early.count)
        let rest = onTime.count + late.count
        if rest > room {
            let keep = { (points: [(x: Double, y: Double)]) -> [(x: Double, y: Double)] in
                let share = Int((Double(points.count) * Double(room) / Double(rest)).rounded(.down))
                let step = Double(points.count) / Double(max(share, 1))
                return (0..<share).map { points[Int(Double($0) * step)] }
            }
            onTime = keep(onTime)
            late = keep(late)
            result.thinned = rest - onTime.count - late.count
        }
        result.onTime = onTime
        result.late = late
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
