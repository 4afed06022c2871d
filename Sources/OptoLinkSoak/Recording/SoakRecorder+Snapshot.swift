extension SoakRecorder {
    /// Counters for the progress line.
    package func progressCounters() -> (requests: Int, status429: Int, errors: Int, done: Int, p99: Double) {
        state.withLock { s in
            (
                s.attempts, s.status429, s.errors, s.journeysCompleted + s.journeysUnfinished,
                s.allAttempts.percentile(99)
            )
        }
    }

    /// The per-interval counters, in time order: one row for every interval from 0 to the
    /// end of the run (`activeSeconds`), idle ones included (all zero), so a stall shows as
    /// rows of zeros rather than as a gap.
    func intervalSummary(activeSeconds: Double) -> [SoakSummary.Interval] {
        state.withLock { s in
            let covered = activeSeconds.isFinite ? Int((Swift.max(0, activeSeconds) / interval).rounded(.up)) : 0
            let last = Swift.max(covered, (s.intervals.keys.max() ?? -1) + 1)
            return (0..<last).map { slot in
                let b = s.intervals[slot] ?? IntervalStats()
                return SoakSummary.Interval(
                    t: Double(slot) * interval, journeys: b.journeys, lateStarts: b.lateStarts, attempts: b.attempts,
                    status429: b.status429, errors: b.errors,
                    meanLatencyFromIntended: b.latencyCount > 0 ? b.latencySum / Double(b.latencyCount) : 0,
                    maxLatencyFromIntended: b.latencyMax)
            }
        }
    }

    /// The recorder's part of `summary.json` (everything measured on the client side).
    func summaryParts(activeSeconds: Double) -> (
        journeys: SoakSummary.JourneySummary, endpoints: [String: SoakSummary.EndpointSummary],
        totals: SoakSummary.Totals, deferred: SoakSummary.DeferredMatchSummary, clicks: SoakSummary.ClickSummary,
        opens: SoakSummary.OpenSummary
    ) {
        state.withLock { s in
            let journeys = SoakSummary.JourneySummary(
                scheduled: 0, started: s.journeysStarted, completed: s.journeysCompleted,
                unfinished: s.journeysUnfinished, lateStarts: s.lateStarts, lateThresholdSeconds: lateThreshold,
                startLag: HistogramSummary(s.startLag), byName: s.journeysByName,
                unfinishedByName: s.journeysUnfinishedByName,
                durationFromIntended: s.journeyDurations.mapValues(HistogramSummary.init),
                waitedForDevice: s.journeysWaitedForDevice)
            var endpoints: [String: SoakSummary.EndpointSummary] = [:]
            for (endpoint, e) in s.endpoints {
                endpoints[endpoint.rawValue] = SoakSummary.EndpointSummary(
                    attempts: e.attempts, calls: e.calls, byStatus: e.byStatus,
                    callOutcomes: Dictionary(uniqueKeysWithValues: e.callOutcomes.map { ($0.key.rawValue, $0.value) }),
                    attemptsPerCall: e.attemptsPerCall, attemptLatency: HistogramSummary(e.attemptLatency),
                    attemptLatencyFromIntended: HistogramSummary(e.attemptLatencyFromIntended),
                    callLatency: HistogramSummary(e.callLatency), requestBytes: e.requestBytes,
                    responseBytes: e.responseBytes)
            }
            let totals = SoakSummary.Totals(
                attempts: s.attempts, calls: s.calls, status429: s.status429, errors: s.errors,
                attemptsPerSecond: activeSeconds > 0 ? Double(s.attempts) / activeSeconds : 0)
            let deferred = SoakSummary.DeferredMatchSummary(
                firstLaunches: s.firstLaunches, byMethod: s.deferredByMethod, clicked: s.clickedFirstLaunches)
            let clicks = SoakSummary.ClickSummary(
                count: s.clicks, byStatus: s.clicksByStatus, clipboardPlaced: s.clipboardPlaced,
                latency: HistogramSummary(s.clickLatency))
            var opens = SoakSummary.OpenSummary(
                count: s.opens, emitted: s.opensEmitted, timedOut: s.openOutcomes[.timedOut] ?? 0,
                latency: HistogramSummary(s.openLatency))
            opens.byOutcome = Dictionary(
                uniqueKeysWithValues: OpenOutcome.allCases.map { ($0.rawValue, s.openOutcomes[$0] ?? 0) })
            opens.lost = OpenOutcome.allCases.filter(\.isLost).reduce(0) { $0 + (s.openOutcomes[$1] ?? 0) }
            if let outage {
                opens.outage = SoakSummary.OutageOpenSummary(
                    plan: outage, opens: s.outageOpens, timeToLink: s.outageTimeToLink,
                    timeToLinkByCache: s.outageTimeToLinkByCache, overWorstCase: s.outageOverWorstCase)
            }
            return (journeys, endpoints, totals, deferred, clicks, opens)
        }
    }
}
