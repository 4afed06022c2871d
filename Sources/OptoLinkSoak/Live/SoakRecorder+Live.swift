import SoakRecords

extension SoakRecorder {
    /// The recorder's part of a live metrics snapshot (`--metrics-listen`); the caller fills in
    /// the run's identity, journeys in flight and RSS. Counts are as the events applied so far
    /// made them (``startWriter(backlogLimit:)``); `elapsed` is run seconds now on the run's clock.
    func liveMetrics(elapsed: Double) -> LiveMetrics {
        state.withLock { s in
            LiveMetrics(
                aggregate: s.consumers.aggregate, openCalls: s.calls.openCalls.values, elapsed: elapsed)
        }
    }
}

extension LiveMetrics {
    /// A snapshot of `aggregate` (histograms read in place, never copied) and of the calls open
    /// now (those with an attempt in flight count per endpoint).
    init(aggregate a: RunAggregate, openCalls: some Collection<CallTracker.OpenCall>, elapsed: Double) {
        var endpoints: [String: LiveMetrics.Endpoint] = [:]
        for (endpoint, stats) in a.endpoints {
            endpoints[endpoint.rawValue] = LiveMetrics.Endpoint(
                attemptsByStatus: stats.byStatus,
                callsByOutcome: Dictionary(
                    uniqueKeysWithValues: stats.callOutcomes.map { ($0.key.rawValue, $0.value) }),
                attemptLatency: stats.attemptLatency.prometheus, callLatency: stats.callLatency.prometheus)
        }
        for call in openCalls where call.inFlight > 0 {
            let name = call.endpoint.rawValue
            if endpoints[name] == nil {
                let empty = LatencyHistogram().prometheus
                endpoints[name] = LiveMetrics.Endpoint(attemptLatency: empty, callLatency: empty)
            }
            endpoints[name]?.inFlightCalls += 1
        }
        self.init(
            profile: "", runId: "", elapsedSeconds: elapsed, endpoints: endpoints, status429: a.status429,
            errors: a.errors, journeysStarted: a.journeysStarted, journeysCompleted: a.journeysCompleted,
            journeysUnfinished: a.journeysUnfinished, journeysInFlight: 0, lateStarts: a.lateStarts,
            lateThresholdSeconds: a.lateThreshold, journeysDropped: a.journeysDropped, residentBytes: nil)
    }
}
