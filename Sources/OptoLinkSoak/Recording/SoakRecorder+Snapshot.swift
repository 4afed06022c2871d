import OptoLink
import SoakRecords
import SoakVerdicts

/// What the consumers hold, read through the recorder's lock.
extension SoakRecorder {
    /// The aggregates as they stand, in the mergeable form `shard.json` stores: every record the
    /// events applied so far made (``startWriter(backlogLimit:)``; ``finish()`` applies the rest).
    package func tally() -> RecorderTally {
        state.withLock { $0.consumers.aggregate.tally() }
    }

    /// When the run's latest successful (2xx) write attempt started, seconds since the Unix
    /// epoch; `nil` before one. A ledger read after the run has caught up once it holds a row
    /// that arrived at or after it.
    package var lastSuccessfulWriteEpoch: Double? {
        applyPending()
        let seconds = state.withLock { $0.consumers.ledgerReach.lastWriteSeconds }
        return seconds.isFinite ? timeline.originEpoch + seconds : nil
    }

    /// The per-interval counters, in time order: one row for every interval from 0 to the
    /// end of the run (`activeSeconds`), idle ones included (all zero), so a stall shows as
    /// rows of zeros rather than as a gap.
    func intervalSummary(activeSeconds: Double) -> [SoakSummary.Interval] {
        tally().intervalSummary(activeSeconds: activeSeconds)
    }

    /// The recorder's part of `summary.json` (everything measured on the client side), built
    /// through ``RecorderTally`` so a merged run's summary is built by the same code.
    package func summaryParts(activeSeconds: Double) -> (
        journeys: SoakSummary.JourneySummary, endpoints: [String: SoakSummary.EndpointSummary],
        totals: SoakSummary.Totals, deferred: SoakSummary.DeferredMatchSummary, clicks: SoakSummary.ClickSummary,
        opens: SoakSummary.OpenSummary
    ) {
        tally().summaryParts(activeSeconds: activeSeconds, outage: outage)
    }

    /// Attempt counts by endpoint and status text (or error kind), as applied so far.
    func statusCounts() -> [ContractEndpoint: [String: Int]] {
        state.withLock { $0.consumers.aggregate.endpoints.mapValues(\.byStatus) }
    }

    /// The summary's notes from every record so far.
    package func summaryNotes() -> [String] {
        applyPending()
        return feed.notes()
    }

    /// Judges what the live passes still hold and returns every verdict (call once, after ``finish()``).
    package func finishVerdicts() -> VerdictsReport {
        applyPending()
        return feed.finish()
    }

    /// Every attribution record so far (empty unless the recorder keeps merge inputs).
    package var attribution: [AttributionRecord] {
        state.withLock { s in
            applyQueued(in: &s)
            return s.consumers.aggregate.attribution
        }
    }

    /// The SDK `deviceId` of each launch still open (or with a call still open).
    package var launchDeviceIds: [DeviceLaunch: String] {
        state.withLock { s in
            applyQueued(in: &s)
            return s.calls.launchDeviceIds
        }
    }

    /// Virtual device → the SDK `deviceId` of its latest install.
    package var deviceIds: [String: String] {
        state.withLock { s in
            applyQueued(in: &s)
            return s.calls.deviceIds
        }
    }
}
