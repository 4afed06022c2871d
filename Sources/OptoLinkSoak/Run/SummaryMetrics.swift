import OptoLink

/// Flattens a summary into the metric names thresholds use (latencies in seconds):
/// `http.requests`, `http.errors`, `http.errors.rate`, `http.429`, `http.429.rate`,
/// `<endpoint>.attempts|calls|errors|429`, `<endpoint>.errors.rate|429.rate` (per attempt), `<endpoint>.attempt_latency.<p>`,
/// `<endpoint>.latency_from_intended.<p>`, `<endpoint>.call_latency.<p>` (p = p50 … p999,
/// max, mean), `<endpoint>.calls.<outcome>`, `journeys.*`, `journey.<name>.duration.<p>` (time
/// from the journey's intended start, completed journeys), `journey.<name>.completed|unfinished`,
/// `deferred.*`, `clicks.*`,
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
            MetricPattern("http", ["requests", "calls", "errors", "failed", "429"]),
            MetricPattern("http", "requests_per_second", unit: .perSecond),
            MetricPattern("http", ["errors", "failed", "429"], "rate", unit: .ratio),
            MetricPattern(endpoints, ["attempts", "calls", "errors", "failed", "429"]),
            MetricPattern(endpoints, ["errors", "failed", "429"], "rate", unit: .ratio),
            MetricPattern(endpoints, "calls", .cases(of: CallOutcome.self)),
            MetricPattern(
                endpoints, ["attempt_latency", "latency_from_intended", "call_latency"], statistics, unit: .seconds),
            MetricPattern("journeys", ["started", "completed", "unfinished", "late_starts"]),
            MetricPattern("journeys", "start_lag", statistics, unit: .seconds),
            MetricPattern("journey", .anyName, "duration", statistics, unit: .seconds),
            MetricPattern("journey", .anyName, ["completed", "unfinished"]),
            MetricPattern("deferred", .oneOf(["first_launches", "matched"] + deferredMethods)),
            MetricPattern("deferred", "match_rate", unit: .ratio),
            MetricPattern("clicks", ["count", "clipboard_placed", "errors"]),
            MetricPattern("opens", ["count", "timed_out"]),
            MetricPattern("opens", "latency", statistics, unit: .seconds),
            MetricPattern("rss", "max_bytes", unit: .bytes),
        ]
    }

    /// Metric-name prefixes over which the run measured nothing, with the reason: a rate over
    /// no samples, or a zero count of something that never happened, proves nothing.
    public static func notExercised(_ s: SoakSummary) -> [String: String] {
        var result: [String: String] = [:]
        if s.totals.attempts == 0 { result["http"] = "no HTTP attempt was made" }
        if s.journeys.started == 0 { result["journeys"] = "no journey started" }
        if s.deferredMatch.firstLaunches == 0 { result["deferred"] = "no first launch ran the deferred match" }
        if s.clicks.count == 0 { result["clicks"] = "no click step ran" }
        if s.opens.count == 0 { result["opens"] = "no open step ran" }
        for endpoint in OptoLinkEndpoint.allCases where (s.endpoints[endpoint.rawValue]?.attempts ?? 0) == 0 {
            result[endpoint.rawValue] = "no \(endpoint.rawValue) request was made"
        }
        return result
    }

    public static func build(_ s: SoakSummary) -> [String: Double] {
        build(
            totals: s.totals, endpoints: s.endpoints, journeys: s.journeys, deferred: s.deferredMatch, clicks: s.clicks,
            opens: s.opens, rss: s.rss)
    }

    /// The same from the recorder's parts (live, during the run, for `abortOnFail`).
    static func build(
        totals: SoakSummary.Totals, endpoints: [String: SoakSummary.EndpointSummary], journeys: SoakSummary.JourneySummary,
        deferred: SoakSummary.DeferredMatchSummary, clicks: SoakSummary.ClickSummary, opens: SoakSummary.OpenSummary,
        rss: [SoakSummary.RSSSample]
    ) -> [String: Double] {
        let s = (
            totals: totals, endpoints: endpoints, journeys: journeys, deferredMatch: deferred, clicks: clicks,
            opens: opens, rss: rss
        )
        var m: [String: Double] = [:]
        let attempts = Double(s.totals.attempts)
        var failed = 0
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
            let endpointFailed = OptoLinkEndpoint(rawValue: name).map { ContractStatus.failedCount(e.byStatus, endpoint: $0) } ?? 0
            m["\(name).failed"] = Double(endpointFailed)
            failed += endpointFailed
            m["\(name).errors.rate"] = e.attempts > 0 ? Double(errors) / Double(e.attempts) : 0
            m["\(name).failed.rate"] = e.attempts > 0 ? Double(endpointFailed) / Double(e.attempts) : 0
            m["\(name).429.rate"] = e.attempts > 0 ? Double(e.byStatus["429"] ?? 0) / Double(e.attempts) : 0
            for outcome in CallOutcome.allCases {
                m["\(name).calls.\(outcome.rawValue)"] = Double(e.callOutcomes[outcome.rawValue] ?? 0)
            }
            for (p, v) in e.attemptLatency.namedValues { m["\(name).attempt_latency.\(p)"] = v }
            for (p, v) in e.attemptLatencyFromIntended.namedValues { m["\(name).latency_from_intended.\(p)"] = v }
            for (p, v) in e.callLatency.namedValues { m["\(name).call_latency.\(p)"] = v }
        }
        m["http.failed"] = Double(failed)
        m["http.failed.rate"] = attempts > 0 ? Double(failed) / attempts : 0
        m["journeys.started"] = Double(s.journeys.started)
        m["journeys.completed"] = Double(s.journeys.completed)
        m["journeys.unfinished"] = Double(s.journeys.unfinished)
        m["journeys.late_starts"] = Double(s.journeys.lateStarts)
        for (p, v) in s.journeys.startLag.namedValues { m["journeys.start_lag.\(p)"] = v }
        for name in s.journeys.byName.keys {
            let durations = s.journeys.durationFromIntended[name]
            for (p, v) in durations?.namedValues ?? [:] { m["journey.\(name).duration.\(p)"] = v }
            m["journey.\(name).completed"] = Double(durations?.count ?? 0)
            m["journey.\(name).unfinished"] = Double(s.journeys.unfinishedByName[name] ?? 0)
        }
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
