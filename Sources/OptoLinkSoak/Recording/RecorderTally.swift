import OptoLink
import SoakSupport
import SoakRecords
import SoakVerdicts

/// Everything the recorder aggregates for `summary.json` (counts, HDR histograms, the per-interval
/// timeline), in a form that is written losslessly into a shard's `shard.json` and merges exactly:
/// counts add, histograms add bucket by bucket, interval rows add slot by slot.
///
/// ``SoakRecorder`` builds one at the end of a run; `merge` adds the shards' tallies and builds the
/// same summary sections from the sum as a single process would have (``summaryParts(activeSeconds:outage:)``).
/// Keys are the vocabulary's raw values (`ok`, `cancelled_by_run`, `during`, …); times are seconds.
package struct RecorderTally: Sendable, Codable, Equatable {
    /// One row of the `timeline`: the counters of interval `slot` (`slot × interval` seconds on).
    package struct Interval: Sendable, Codable, Equatable {
        package var slot: Int
        package var journeys = 0
        package var lateStarts = 0
        /// Arrivals planned in the interval that never started (open model).
        package var dropped = 0
        package var attempts = 0
        package var status429 = 0
        package var errors = 0
        /// Sum, count and max of `end − intended_start` over the interval's finished attempts.
        package var latencySum = 0.0
        package var latencyCount = 0
        package var latencyMax = 0.0

        mutating func add(_ o: Interval) {
            journeys += o.journeys
            lateStarts += o.lateStarts
            dropped += o.dropped
            attempts += o.attempts
            status429 += o.status429
            errors += o.errors
            latencySum += o.latencySum
            latencyCount += o.latencyCount
            latencyMax = Swift.max(latencyMax, o.latencyMax)
        }
    }

    /// One endpoint's counts and histograms.
    package struct Endpoint: Sendable, Codable, Equatable {
        package var attempts = 0
        package var calls = 0
        package var byStatus: [String: Int] = [:]
        package var callOutcomes: [String: Int] = [:]
        package var attemptsPerCall: [String: Int] = [:]
        package var attemptLatency = LatencyHistogram()
        package var attemptLatencyFromIntended = LatencyHistogram()
        package var callLatency = LatencyHistogram()
        package var requestBytes = 0
        package var responseBytes = 0
        /// Success statuses with a body off the contract; `nil` in shards written before it was counted.
        package var offContract: Int?
        /// The first off-contract body seen (``ContractBodyShape/excerpt(_:)``).
        package var firstOffContractBody: String?

        mutating func add(_ o: Endpoint) {
            if firstOffContractBody == nil { firstOffContractBody = o.firstOffContractBody }
            attempts += o.attempts
            calls += o.calls
            byStatus.add(o.byStatus)
            callOutcomes.add(o.callOutcomes)
            attemptsPerCall.add(o.attemptsPerCall)
            attemptLatency.merge(o.attemptLatency)
            attemptLatencyFromIntended.merge(o.attemptLatencyFromIntended)
            callLatency.merge(o.callLatency)
            requestBytes += o.requestBytes
            responseBytes += o.responseBytes
            if let more = o.offContract { offContract = (offContract ?? 0) + more }
        }
    }

    /// Seconds per timeline interval, and the late-start threshold in seconds.
    package var interval: Double
    package var lateThreshold: Double
    package var intervals: [Interval] = []
    package var endpoints: [String: Endpoint] = [:]
    package var attempts = 0
    package var calls = 0
    package var status429 = 0
    package var errors = 0
    package var journeysStarted = 0
    package var journeysCompleted = 0
    package var journeysUnfinished = 0
    package var journeysByName: [String: Int] = [:]
    package var journeysWaitedForDevice = 0
    package var journeysDropped = 0
    package var journeysUnfinishedByName: [String: Int] = [:]
    package var journeyDurations: [String: LatencyHistogram] = [:]
    package var lateStarts = 0
    package var startLag = LatencyHistogram()
    package var firstLaunches = 0
    package var clickedFirstLaunches = 0
    package var deferredByMethod: [String: Int] = [:]
    package var clicks = 0
    package var clicksByStatus: [String: Int] = [:]
    package var clipboardPlaced = 0
    package var clickLatency = LatencyHistogram()
    package var opens = 0
    package var opensEmitted = 0
    package var openLatency = LatencyHistogram()
    package var openOutcomes: [String: Int] = [:]
    /// Phase → `cache_on`/`cache_off` → outcome → opens (Universal Link opens around an outage).
    package var outageOpens: [String: [String: [String: Int]]] = [:]
    package var outageTimeToLink = LatencyHistogram()
    package var outageTimeToLinkByCache: [String: LatencyHistogram] = [:]
    package var outageOverWorstCase = 0

    package init(interval: Double, lateThreshold: Double) {
        self.interval = interval
        self.lateThreshold = lateThreshold
    }

    /// Adds `other` (another shard of the same plan) into this tally. Its interval rows move
    /// by `slotShift` slots (a shard whose time 0 was that many intervals after this one's).
    package mutating func add(_ other: RecorderTally, slotShift: Int = 0) {
        var bySlot = Dictionary(uniqueKeysWithValues: intervals.map { ($0.slot, $0) })
        for row in other.intervals {
            let slot = row.slot + slotShift
            var merged = bySlot[slot] ?? Interval(slot: slot)
            merged.add(row)
            bySlot[slot] = merged
        }
        intervals = bySlot.values.sorted { $0.slot < $1.slot }
        for (name, endpoint) in other.endpoints { endpoints[name, default: Endpoint()].add(endpoint) }
        attempts += other.attempts
        calls += other.calls
        status429 += other.status429
        errors += other.errors
        journeysStarted += other.journeysStarted
        journeysCompleted += other.journeysCompleted
        journeysUnfinished += other.journeysUnfinished
        journeysByName.add(other.journeysByName)
        journeysWaitedForDevice += other.journeysWaitedForDevice
        journeysDropped += other.journeysDropped
        journeysUnfinishedByName.add(other.journeysUnfinishedByName)
        for (name, histogram) in other.journeyDurations {
            journeyDurations[name, default: LatencyHistogram()].merge(histogram)
        }
        lateStarts += other.lateStarts
        startLag.merge(other.startLag)
        firstLaunches += other.firstLaunches
        clickedFirstLaunches += other.clickedFirstLaunches
        deferredByMethod.add(other.deferredByMethod)
        clicks += other.clicks
        clicksByStatus.add(other.clicksByStatus)
        clipboardPlaced += other.clipboardPlaced
        clickLatency.merge(other.clickLatency)
        opens += other.opens
        opensEmitted += other.opensEmitted
        openLatency.merge(other.openLatency)
        openOutcomes.add(other.openOutcomes)
        for (phase, groups) in other.outageOpens {
            for (group, outcomes) in groups { outageOpens[phase, default: [:]][group, default: [:]].add(outcomes) }
        }
        outageTimeToLink.merge(other.outageTimeToLink)
        for (group, histogram) in other.outageTimeToLinkByCache {
            outageTimeToLinkByCache[group, default: LatencyHistogram()].merge(histogram)
        }
        outageOverWorstCase += other.outageOverWorstCase
    }

    /// The per-interval rows of `summary.json`, one for every interval from 0 to `activeSeconds`
    /// (idle ones all zero, so a stall shows as zeros rather than a gap).
    package func intervalSummary(activeSeconds: Double) -> [SoakSummary.Interval] {
        let bySlot = Dictionary(uniqueKeysWithValues: intervals.map { ($0.slot, $0) })
        let covered = activeSeconds.isFinite ? Int((Swift.max(0, activeSeconds) / interval).rounded(.up)) : 0
        let last = Swift.max(covered, (bySlot.keys.max() ?? -1) + 1)
        return (0..<last).map { slot in
            let b = bySlot[slot] ?? Interval(slot: slot)
            return SoakSummary.Interval(
                t: Double(slot) * interval, journeys: b.journeys, lateStarts: b.lateStarts, dropped: b.dropped,
                attempts: b.attempts,
                status429: b.status429, errors: b.errors,
                meanLatencyFromIntended: b.latencyCount > 0 ? b.latencySum / Double(b.latencyCount) : 0,
                maxLatencyFromIntended: b.latencyMax)
        }
    }

    /// The client-side sections of `summary.json` built from this tally.
    package func summaryParts(activeSeconds: Double, outage: OutagePlan?) -> (
        journeys: SoakSummary.JourneySummary, endpoints: [String: SoakSummary.EndpointSummary],
        totals: SoakSummary.Totals, deferred: SoakSummary.DeferredMatchSummary, clicks: SoakSummary.ClickSummary,
        opens: SoakSummary.OpenSummary
    ) {
        let journeys = SoakSummary.JourneySummary(
            scheduled: 0, started: journeysStarted, completed: journeysCompleted, unfinished: journeysUnfinished,
            lateStarts: lateStarts, lateThresholdSeconds: lateThreshold, startLag: HistogramSummary(startLag),
            byName: journeysByName, unfinishedByName: journeysUnfinishedByName,
            durationFromIntended: journeyDurations.mapValues(HistogramSummary.init),
            waitedForDevice: journeysWaitedForDevice, dropped: journeysDropped)
        let endpointSummaries = endpoints.mapValues { e in
            SoakSummary.EndpointSummary(
                attempts: e.attempts, calls: e.calls, byStatus: e.byStatus, callOutcomes: e.callOutcomes,
                attemptsPerCall: e.attemptsPerCall, attemptLatency: HistogramSummary(e.attemptLatency),
                attemptLatencyFromIntended: HistogramSummary(e.attemptLatencyFromIntended),
                callLatency: HistogramSummary(e.callLatency), requestBytes: e.requestBytes,
                responseBytes: e.responseBytes, offContractResponses: e.offContract,
                firstOffContractBody: e.firstOffContractBody)
        }
        let totals = SoakSummary.Totals(
            attempts: attempts, calls: calls, status429: status429, errors: errors,
            attemptsPerSecond: activeSeconds > 0 ? Double(attempts) / activeSeconds : 0)
        let deferred = SoakSummary.DeferredMatchSummary(
            firstLaunches: firstLaunches, byMethod: deferredByMethod, clicked: clickedFirstLaunches)
        let clickSummary = SoakSummary.ClickSummary(
            count: clicks, byStatus: clicksByStatus, clipboardPlaced: clipboardPlaced,
            latency: HistogramSummary(clickLatency))
        var openSummary = SoakSummary.OpenSummary(
            count: opens, emitted: opensEmitted, timedOut: openOutcomes[OpenOutcome.timedOut.rawValue] ?? 0,
            latency: HistogramSummary(openLatency))
        openSummary.byOutcome = Dictionary(
            uniqueKeysWithValues: OpenOutcome.allCases.map { ($0.rawValue, openOutcomes[$0.rawValue] ?? 0) })
        openSummary.lost = OpenOutcome.allCases.filter(\.isLost).reduce(0) { $0 + (openOutcomes[$1.rawValue] ?? 0) }
        if let outage {
            var byPhase: [OpenPhase: [Bool: [OpenOutcome: Int]]] = [:]
            for (phase, groups) in outageOpens {
                guard let phase = OpenPhase(rawValue: phase) else { continue }
                for (group, outcomes) in groups {
                    for (outcome, count) in outcomes {
                        guard let outcome = OpenOutcome(rawValue: outcome) else { continue }
                        byPhase[phase, default: [:]][group == "cache_on", default: [:]][outcome, default: 0] += count
                    }
                }
            }
            var byCache: [Bool: LatencyHistogram] = [:]
            for (group, histogram) in outageTimeToLinkByCache { byCache[group == "cache_on"] = histogram }
            openSummary.outage = SoakSummary.OutageOpenSummary(
                plan: outage, opens: byPhase, timeToLink: outageTimeToLink, timeToLinkByCache: byCache,
                overWorstCase: outageOverWorstCase)
        }
        return (journeys, endpointSummaries, totals, deferred, clickSummary, openSummary)
    }
}

extension Dictionary where Value == Int {
    /// Adds `other`'s counts key by key.
    fileprivate mutating func add(_ other: [Key: Int]) {
        for (key, count) in other { self[key, default: 0] += count }
    }
}
