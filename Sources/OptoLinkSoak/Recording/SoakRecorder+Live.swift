import SoakRecords
extension SoakRecorder {
    /// The recorder's part of a live metrics snapshot (`--metrics-listen`); the caller fills in
    /// the run's identity, journeys in flight and RSS. Attempts and calls are as the writer has
    /// applied them so far (``startWriter(backlogLimit:)``).
    func liveMetrics() -> LiveMetrics {
        let elapsed = timeline.now()
        let journeys = state.withLock { s in
            (s.journeysStarted, s.journeysCompleted, s.journeysUnfinished, s.lateStarts, s.journeysDropped)
        }
        return callState.withLock { s in
            var endpoints: [String: LiveMetrics.Endpoint] = [:]
            for (endpoint, stats) in s.endpoints {
                endpoints[endpoint.rawValue] = LiveMetrics.Endpoint(
                    attemptsByStatus: stats.byStatus,
                    callsByOutcome: Dictionary(
                        uniqueKeysWithValues: stats.callOutcomes.map { ($0.key.rawValue, $0.value) }),
                    attemptLatency: stats.attemptLatency.prometheus, callLatency: stats.callLatency.prometheus)
            }
            for call in s.openCalls.values where call.inFlight > 0 {
                let name = call.endpoint.rawValue
                if endpoints[name] == nil {
                    let empty = LatencyHistogram().prometheus
                    endpoints[name] = LiveMetrics.Endpoint(attemptLatency: empty, callLatency: empty)
                }
                endpoints[name]?.inFlightCalls += 1
            }
            return LiveMetrics(
                profile: "", runId: "", elapsedSeconds: elapsed, endpoints: endpoints, status429: s.status429,
                errors: s.errors, journeysStarted: journeys.0, journeysCompleted: journeys.1,
                journeysUnfinished: journeys.2, journeysInFlight: 0, lateStarts: journeys.3,
                lateThresholdSeconds: lateThreshold, journeysDropped: journeys.4, residentBytes: nil)
        }
    }
}
