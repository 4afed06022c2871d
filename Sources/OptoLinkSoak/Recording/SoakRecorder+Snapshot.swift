import SoakVerdicts
extension SoakRecorder {
    /// Counters for the progress line; attempts as the writer has applied them so far.
    package func progressCounters() -> (requests: Int, status429: Int, errors: Int, done: Int, p99: Double) {
        let done = state.withLock { $0.journeysCompleted + $0.journeysUnfinished }
        return callState.withLock { s in (s.attempts, s.status429, s.errors, done, s.allAttempts.percentile(99)) }
    }

    /// The per-interval counters, in time order: one row for every interval from 0 to the
    /// end of the run (`activeSeconds`), idle ones included (all zero), so a stall shows as
    /// rows of zeros rather than as a gap.
    func intervalSummary(activeSeconds: Double) -> [SoakSummary.Interval] {
        tally().intervalSummary(activeSeconds: activeSeconds)
    }

    /// The recorder's part of `summary.json` (everything measured on the client side), built
    /// through ``RecorderTally`` so a merged run's summary is built by the same code.
    func summaryParts(activeSeconds: Double) -> (
        journeys: SoakSummary.JourneySummary, endpoints: [String: SoakSummary.EndpointSummary],
        totals: SoakSummary.Totals, deferred: SoakSummary.DeferredMatchSummary, clicks: SoakSummary.ClickSummary,
        opens: SoakSummary.OpenSummary
    ) {
        tally().summaryParts(activeSeconds: activeSeconds, outage: outage)
    }
}
