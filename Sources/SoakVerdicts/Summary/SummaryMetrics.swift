import SoakRecords

/// Flattens a summary into the metric names thresholds use (latencies in seconds):
/// `http.requests`, `http.errors`, `http.errors.rate`, `http.429`, `http.429.rate`,
/// `<endpoint>.attempts|calls|errors|429`, `<endpoint>.errors.rate|429.rate` (per attempt), `<endpoint>.attempt_latency.<p>`,
/// `<endpoint>.latency_from_intended.<p>`, `<endpoint>.call_latency.<p>` (p = p50 … p999,
/// max, mean), `<endpoint>.calls.<outcome>`, `journeys.*`, `journey.<name>.duration.<p>` (time
/// from the journey's intended start, completed journeys), `journey.<name>.completed|unfinished`,
/// `deferred.*`, `clicks.*`, `opens.*` (``openMetrics(_:)``), `rss.max_bytes`. Every name is listed
/// in `Reports/README.md`.
package enum SummaryMetrics {
    /// The statistics of a latency histogram, as metric suffixes (seconds).
    static let statistics = ["p50", "p90", "p95", "p99", "p999", "max", "mean", "min"]
    /// Every deferred-match method a run counts (the contract's methods, `NONE` for no link).
    static let deferredMethods = AttributionVerdict.methods

    /// Every metric name ``build(_:)`` can produce.
    static var patterns: [MetricPattern] {
        let endpoints = MetricPatternPart.cases(of: ContractEndpoint.self)
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
            MetricPattern("journeys", ["started", "completed", "unfinished", "late_starts", "dropped"]),
            MetricPattern("journeys", "late_starts", "rate", unit: .ratio),
            MetricPattern("journeys", "start_lag", statistics, unit: .seconds),
            MetricPattern("journey", .anyName, "duration", statistics, unit: .seconds),
            MetricPattern("journey", .anyName, ["completed", "unfinished"]),
            MetricPattern("deferred", .oneOf(["first_launches", "matched"] + deferredMethods)),
            MetricPattern("deferred", "match_rate", unit: .ratio),
            MetricPattern("clicks", ["count", "clipboard_placed", "errors"]),
            MetricPattern("opens", ["count", "timed_out", "lost"]),
            MetricPattern("opens", .cases(of: OpenOutcome.self)),
            MetricPattern("opens", "latency", statistics, unit: .seconds),
            MetricPattern(
                "opens", "outage", .oneOf(["count", "lost", "over_worst_case"] + OpenOutcome.allCases.map(\.rawValue))),
            MetricPattern("opens", "outage", "fallback_rate", unit: .ratio),
            MetricPattern("opens", "outage", "worst_case", unit: .seconds),
            MetricPattern("opens", "outage", .cases(of: OpenPhase.self), .oneOf(phaseCounts)),
            MetricPattern("opens", "outage", ["cache_on", "cache_off"], ["count", "lost"]),
            MetricPattern("opens", "outage", ["cache_on", "cache_off"], ["cached_share", "raw_share"], unit: .ratio),
            MetricPattern("opens", "outage", "time_to_link", statistics, unit: .seconds),
            MetricPattern("rss", "max_bytes", unit: .bytes),
            MetricPattern("rss", "growth_mb_per_hour", unit: .megabytesPerHour),
        ]
    }

    /// Metric-name prefixes over which the run measured nothing, with the reason: a rate over
    /// no samples, or a zero count of something that never happened, proves nothing.
    package static func notExercised(_ s: SoakSummary) -> [String: String] {
        var result: [String: String] = [:]
        if s.totals.attempts == 0 { result["http"] = "no HTTP attempt was made" }
        if s.journeys.started == 0 { result["journeys"] = "no journey started" }
        if s.deferredMatch.firstLaunches == 0 { result["deferred"] = "no first launch ran the deferred match" }
        if s.clicks.count == 0 { result["clicks"] = "no click step ran" }
        if s.opens.count == 0 { result["opens"] = "no open step ran" }
        if RSSGrowth.growthMiBPerHour(s.rss) == nil {
            result["rss.growth_mb_per_hour"] = "fewer than 3 RSS samples in the second half of the run"
        }
        for endpoint in ContractEndpoint.allCases where (s.endpoints[endpoint.rawValue]?.attempts ?? 0) == 0 {
            result[endpoint.rawValue] = "no \(endpoint.rawValue) request was made"
        }
        return result
    }

    /// The per-phase names: `opens.outage.<phase>.<name>`.
    static let phaseCounts = ["count", "lost"] + OpenOutcome.allCases.map(\.rawValue)

    /// The `opens.*` metrics: counts by outcome, lost opens, latency; with an outage, the opens
    /// `during` it (`opens.outage.count`, `.<outcome>`, `.lost`, `.fallback_rate`,
    /// `.over_worst_case`, `.worst_case` in seconds, `.time_to_link.<p>`), each phase's counts
    /// (`opens.outage.<phase>.<outcome>`), and each route-cache group's shares during it
    /// (`opens.outage.cache_on.cached_share`, `opens.outage.cache_off.raw_share`). A share or rate
    /// over no opens is left out, so a threshold on it fails as "not available" instead of
    /// passing on nothing.
    package static func openMetrics(_ opens: SoakSummary.OpenSummary) -> [String: Double] {
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

    package static func build(_ s: SoakSummary) -> [String: Double] {
        build(
            totals: s.totals, endpoints: s.endpoints, journeys: s.journeys, deferred: s.deferredMatch, clicks: s.clicks,
            opens: s.opens, rss: s.rss)
    }

    /// The same from the recorder's parts (live, during the run, for `abortOnFail`).
    package static func build(
        totals: SoakSummary.Totals, endpoints: [String: SoakSummary.EndpointSummary],
        journeys: SoakSummary.JourneySummary,
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
            let endpointFailed =
                (ContractEndpoint(rawValue: name).map { ContractStatus.failedCount(e.byStatus, endpoint: $0) } ?? 0)
                + (e.offContractResponses ?? 0)
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
        m["journeys.late_starts.rate"] = GeneratorHealth.lateStartRate(s.journeys)
        m["journeys.dropped"] = Double(s.journeys.dropped ?? 0)
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
        m.merge(openMetrics(s.opens)) { _, new in new }
        m["rss.max_bytes"] = Double(s.rss.map(\.bytes).max() ?? 0)
        if let growth = RSSGrowth.growthMiBPerHour(s.rss) { m["rss.growth_mb_per_hour"] = growth }
        return m
    }
}
