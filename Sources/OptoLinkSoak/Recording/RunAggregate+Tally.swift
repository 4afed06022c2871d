import SoakRecords
import SoakVerdicts

extension RunAggregate {
    /// The aggregates as they stand, in the mergeable form `shard.json` stores.
    func tally() -> RecorderTally {
        var t = RecorderTally(interval: interval, lateThreshold: lateThreshold)
        t.intervals = intervals.keys.sorted().map { slot in
            let b = intervals[slot] ?? IntervalStats()
            return RecorderTally.Interval(
                slot: slot, journeys: b.journeys, lateStarts: b.lateStarts, dropped: b.dropped, attempts: b.attempts,
                status429: b.status429, errors: b.errors, latencySum: b.latencySum, latencyCount: b.latencyCount,
                latencyMax: b.latencyMax)
        }
        for (endpoint, e) in endpoints {
            t.endpoints[endpoint.rawValue] = RecorderTally.Endpoint(
                attempts: e.attempts, calls: e.calls, byStatus: e.byStatus,
                callOutcomes: Dictionary(uniqueKeysWithValues: e.callOutcomes.map { ($0.key.rawValue, $0.value) }),
                attemptsPerCall: e.attemptsPerCall, attemptLatency: e.attemptLatency,
                attemptLatencyFromIntended: e.attemptLatencyFromIntended, callLatency: e.callLatency,
                requestBytes: e.requestBytes, responseBytes: e.responseBytes, offContract: e.offContract,
                firstOffContractBody: e.firstOffContractBody)
        }
        t.attempts = attempts
        t.calls = calls
        t.status429 = status429
        t.errors = errors
        addJourneys(to: &t)
        addClicksAndOpens(to: &t)
        return t
    }

    private func addJourneys(to t: inout RecorderTally) {
        t.journeysStarted = journeysStarted
        t.journeysCompleted = journeysCompleted
        t.journeysUnfinished = journeysUnfinished
        t.journeysByName = journeysByName
        t.journeysWaitedForDevice = journeysWaitedForDevice
        t.journeysDropped = journeysDropped
        t.journeysUnfinishedByName = journeysUnfinishedByName
        t.journeyDurations = journeyDurations
        t.lateStarts = lateStarts
        t.startLag = startLag
        t.firstLaunches = firstLaunches
        t.clickedFirstLaunches = clickedFirstLaunches
        t.deferredByMethod = deferredByMethod
    }

    private func addClicksAndOpens(to t: inout RecorderTally) {
        t.clicks = clicks
        t.clicksByStatus = clicksByStatus
        t.clipboardPlaced = clipboardPlaced
        t.clickLatency = clickLatency
        t.opens = opens
        t.opensEmitted = opensEmitted
        t.openLatency = openLatency
        t.openOutcomes = Dictionary(uniqueKeysWithValues: openOutcomes.map { ($0.key.rawValue, $0.value) })
        for (phase, groups) in outageOpens {
            for (cache, outcomes) in groups {
                t.outageOpens[phase.rawValue, default: [:]][SoakSummary.OutageOpenSummary.group(cache)] =
                    Dictionary(uniqueKeysWithValues: outcomes.map { ($0.key.rawValue, $0.value) })
            }
        }
        t.outageTimeToLink = outageTimeToLink
        for (cache, histogram) in outageTimeToLinkByCache {
            t.outageTimeToLinkByCache[SoakSummary.OutageOpenSummary.group(cache)] = histogram
        }
        t.outageOverWorstCase = outageOverWorstCase
    }
}
