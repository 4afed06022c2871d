import OptoLink

/// Flattens a summary into the metric names thresholds use (latencies in seconds):
/// `http.requests`, `http.errors`, `http.errors.rate`, `http.429`, `http.429.rate`,
/// `<endpoint>.attempts|calls|errors|429`, `<endpoint>.errors.rate|429.rate` (per attempt), `<endpoint>.attempt_latency.<p>`,
/// `<endpoint>.latency_from_intended.<p>`, `<endpoint>.call_latency.<p>` (p = p50 … p999,
/// max, mean), `<endpoint>.calls.<outcome>`, `journeys.*`, `deferred.*`, `clicks.*`,
/// `opens.*`, `rss.max_bytes`. Every name is listed in `Reports/README.md`.
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
            MetricPattern("opens", ["count", "timed_out"]),
            MetricPattern("opens", "latency", statistics),
            MetricPattern("rss", "max_bytes"),
        ]
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
        m["opens.count"] = Double(s.opens.count)
        m["opens.timed_out"] = Double(s.opens.timedOut)
        for (p, v) in s.opens.latency.namedValues { m["opens.latency.\(p)"] = v }
        m["rss.max_bytes"] = Double(s.rss.map(\.bytes).max() ?? 0)
        return m
    }
}
