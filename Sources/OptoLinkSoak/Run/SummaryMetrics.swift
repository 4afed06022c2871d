import OptoLink

/// Flattens a summary into the metric names thresholds use (latencies in seconds):
/// `http.requests`, `http.errors`, `http.errors.rate`, `http.429`, `http.429.rate`,
/// `<endpoint>.attempts|calls|errors|429`, `<endpoint>.errors.rate|429.rate` (per attempt), `<endpoint>.attempt_latency.<p>`,
/// `<endpoint>.latency_from_intended.<p>`, `<endpoint>.call_latency.<p>` (p = p50 … p999,
/// max, mean), `<endpoint>.calls.<outcome>`, `journeys.*`, `deferred.*`, `clicks.*`,
/// `opens.*` (``openMetrics(_:)``), `rss.max_bytes`. Every name is listed in `Reports/README.md`.
public enum SummaryMetrics {
    /// The statistics of a latency histogram, as metric suffixes (seconds).
    static let statistics = ["p50", "p90", "p95", "p99", "p999", "max", "mean", "min"]
    /// Every deferred-match method a run counts (the contract's methods, `NONE` for no link).
    static let deferredMethods = AttributionVerdict.methods

    /// Every metric name ``build(_:)`` can produce.
    static var patterns: [MetricPattern] {
        let endpoints = MetricPatternPart.cases(of: OptoLinkEndpoint.self)
        let statistics = MetricPatternPart.oneOf(statistics)
        return [
            MetricPattern("http", ["requests", "calls", "errors", "429", "requests_per_second"]),
            MetricPattern("http", ["errors", "429"], "rate"),
            MetricPattern(endpoints, ["attempts", "calls", "errors", "429"]),
            MetricPattern(endpoints, ["errors", "429"], "rate"),
            MetricPattern(endpoints, "calls", .cases(of: CallOutcome.self)),
            MetricPattern(endpoints, ["attempt_latency", "latency_from_intended", "call_latency"], statistics),
            MetricPattern("journeys", ["started", "completed", "unfinished", "late_starts"]),
            MetricPattern("journeys", "start_lag", statistics),
            MetricPattern("deferred", .oneOf(["first_launches", "matched", "match_rate"] + deferredMethods)),
            MetricPattern("clicks", ["count", "clipboard_placed", "errors"]),
            MetricPattern("opens", ["count", "timed_out", "lost"]),
            MetricPattern("opens", .cases(of: OpenOutcome.self)),
            MetricPattern("opens", "latency", statistics),
            MetricPattern("opens", "outage", .oneOf(outageDuring + OpenOutcome.allCases.map(\.rawValue))),
            MetricPattern("opens", "outage", .cases(of: OpenPhase.self), .oneOf(phaseCounts)),
            MetricPattern("opens", "outage", ["cache_on", "cache_off"], ["count", "cached_share", "raw_share", "lost"]),
            MetricPattern("opens", "outage", "time_to_link", statistics),
            MetricPattern("rss", "max_bytes"),
        ]
    }

    /// The `opens.outage.*` names that sum up the opens `during` an outage.
    static let outageDuring = ["count", "lost", "fallback_rate", "over_worst_case", "worst_case"]
    /// The per-phase names: `opens.outage.<phase>.<name>`.
    static let phaseCounts = ["count", "lost"] + OpenOutcome.allCases.map(\.rawValue)

    /// The `opens.*` metrics: counts by outcome, lost opens, latency; with an outage, the opens
    /// `during` it (`opens.outage.count`, `.<outcome>`, `.lost`, `.fallback_rate`,
    /// `.over_worst_case`, `.worst_case` in seconds, `.time_to_link.<p>`), each phase's counts
    /// (`opens.outage.<phase>.<outcome>`), and each route-cache group's shares during it
    /// (`opens.outage.cache_on.cached_share`, `opens.outage.cache_off.raw_share`). A share or rate
    /// over no opens is left out, so a threshold on it fails as "not available" instead of
    /// passing on nothing.
    static func openMetrics(_ opens: SoakSummary.OpenSummary) -> [String: Double] {
        var m: [String: Double] = [:]
        m["opens.count"] = Double(opens.count)
        m["opens.timed_out"] = Double(opens.timedOut)
        for (p, v) in opens.latency.namedValues { m["opens.latency.\(p)"] = v }
        if let byOutcome = opens.byOutcome {
            for outcome in OpenOutcome.allCases {
                m["opens.\(outcome.rawValue)"] = Double(byOutcome[outcome.rawValue] ?? 0)
            }
        }
        if let lost = opens.lost { m["opens.lost"] = Double(lost) }
        guard let outage = opens.outage else { return m }
        for phase in OpenPhase.allCases {
            m["opens.outage.\(phase.rawValue).count"] = Double(outage.count(phase))
            m["opens.outage.\(phase.rawValue).lost"] = Double(
                OpenOutcome.allCases.filter(\.isLost).reduce(0) { $0 + outage.count(phase, $1) })
            for outcome in OpenOutcome.allCases {
                m["opens.outage.\(phase.rawValue).\(outcome.rawValue)"] = Double(outage.count(phase, outcome))
            }
        }
        let during = outage.count(.during)
        m["opens.outage.count"] = Double(during)
        for outcome in OpenOutcome.allCases {
            m["opens.outage.\(outcome.rawValue)"] = Double(outage.count(.during, outcome))
        }
        m["opens.outage.lost"] = m["opens.outage.during.lost"]
        let fallback = outage.count(.during, .cached) + outage.count(.during, .raw)
        if during > 0 { m["opens.outage.fallback_rate"] = Double(fallback) / Double(during) }
        m["opens.outage.over_worst_case"] = Double(outage.overWorstCase)
        m["opens.outage.worst_case"] = outage.worstCaseSeconds
        for group in ["cache_on", "cache_off"] {
            let count = outage.count(.during, group: group)
            m["opens.outage.\(group).count"] = Double(count)
            m["opens.outage.\(group).lost"] = Double(
                outage.count(.during, group: group, .timedOut) + outage.count(.during, group: group, .cancelledByRun))
            guard count > 0 else { continue }
            let cached = outage.count(.during, group: group, .cached)
            m["opens.outage.\(group).cached_share"] = Double(cached) / Double(count)
            m["opens.outage.\(group).raw_share"] = Double(outage.count(.during, group: group, .raw)) / Double(count)
        }
        if outage.timeToLink.count > 0 {
            for (p, v) in outage.timeToLink.namedValues { m["opens.outage.time_to_link.\(p)"] = v }
        }
        return m
    }

    public static func build(_ s: SoakSummary) -> [String: Double] {
        var m: [String: Double] = [:]
        let attempts = Double(s.totals.attempts)
        m["http.requests"] = attempts
        m["http.calls"] = Double(s.totals.calls)
        m["http.errors"] = Double(s.totals.errors)
        m["http.errors.rate"] = attempts > 0 ? Double(s.totals.errors) / attempts : 0
        m["http.429"] = Double(s.totals.status429)
        m["http.429.rate"] = attempts > 0 ? Double(s.totals.status429) / attempts : 0
        m["http.requests_per_second"] = s.totals.attemptsPerSecond
        for (name, e) in s.endpoints {
            m["\(name).attempts"] = Double(e.attempts)
            m["\(name).calls"] = Double(e.calls)
            // 5xx and attempts with no response; attempts the run cancelled are not the backend's errors.
            let errors = e.byStatus.filter { key, _ in
                Int(key).map { $0 >= 500 } ?? !(AttemptErrorKind(rawValue: key)?.isCancellation ?? false)
            }.values.reduce(0, +)
            m["\(name).errors"] = Double(errors)
            m["\(name).429"] = Double(e.byStatus["429"] ?? 0)
            m["\(name).errors.rate"] = e.attempts > 0 ? Double(errors) / Double(e.attempts) : 0
            m["\(name).429.rate"] = e.attempts > 0 ? Double(e.byStatus["429"] ?? 0) / Double(e.attempts) : 0
            for outcome in CallOutcome.allCases {
                m["\(name).calls.\(outcome.rawValue)"] = Double(e.callOutcomes[outcome.rawValue] ?? 0)
            }
            for (p, v) in e.attemptLatency.namedValues { m["\(name).attempt_latency.\(p)"] = v }
            for (p, v) in e.attemptLatencyFromIntended.namedValues { m["\(name).latency_from_intended.\(p)"] = v }
            for (p, v) in e.callLatency.namedValues { m["\(name).call_latency.\(p)"] = v }
        }
        m["journeys.started"] = Double(s.journeys.started)
        m["journeys.completed"] = Double(s.journeys.completed)
        m["journeys.unfinished"] = Double(s.journeys.unfinished)
        m["journeys.late_starts"] = Double(s.journeys.lateStarts)
        for (p, v) in s.journeys.startLag.namedValues { m["journeys.start_lag.\(p)"] = v }
        let first = Double(s.deferredMatch.firstLaunches)
        m["deferred.first_launches"] = first
        let none = Double(s.deferredMatch.byMethod["NONE"] ?? 0)
        m["deferred.matched"] = first - none
        m["deferred.match_rate"] = first > 0 ? (first - none) / first : 0
        for method in deferredMethods { m["deferred.\(method)"] = Double(s.deferredMatch.byMethod[method] ?? 0) }
        m["clicks.count"] = Double(s.clicks.count)
        m["clicks.clipboard_placed"] = Double(s.clicks.clipboardPlaced)
        m["clicks.errors"] = Double(s.clicks.byStatus.filter { $0.key != "200" }.values.reduce(0, +))
        m.merge(openMetrics(s.opens)) { _, new in new }
        m["rss.max_bytes"] = Double(s.rss.map(\.bytes).max() ?? 0)
        return m
    }
}
