import Foundation
import OptoLink
import SoakRecords
import SoakSupport

/// The run's bounded aggregates (counts, HDR histograms, the per-interval timeline): a consumer of
/// the recorder's records whose ``tally()`` is the mergeable form `summary.json` is built from.
struct RunAggregate: RecordConsumer {
    /// Counters of one interval of the run (the `timeline` of `summary.json`).
    struct IntervalStats {
        var journeys = 0
        var lateStarts = 0
        var dropped = 0
        var attempts = 0
        var status429 = 0
        var errors = 0
        var latencySum = 0.0
        /// Attempts in `latencySum` (cancelled ones are left out).
        var latencyCount = 0
        var latencyMax = 0.0
    }

    struct EndpointStats {
        var attempts = 0
        var calls = 0
        var byStatus: [String: Int] = [:]
        var callOutcomes: [CallOutcome: Int] = [:]
        var attemptsPerCall: [String: Int] = [:]
        var attemptLatency = LatencyHistogram()
        var attemptLatencyFromIntended = LatencyHistogram()
        var callLatency = LatencyHistogram()
        var requestBytes = 0
        var responseBytes = 0
        var offContract = 0
        /// The first off-contract body, as ``ContractBodyShape/excerpt(_:)`` keeps it.
        var firstOffContractBody: String?
    }

    /// Seconds per `timeline` interval.
    let interval: Double
    /// A journey starting later than this after its intended start counts as a late start.
    let lateThreshold: Double
    /// The profile's `/data` outage windows, to place each open (`nil`: no outage declared).
    let outage: OutagePlan?
    /// Whether every attribution record is kept (a shard's manifest needs them).
    let keepsMergeInputs: Bool

    var intervals: [Int: IntervalStats] = [:]
    var endpoints: [ContractEndpoint: EndpointStats] = [:]
    var attempts = 0
    var calls = 0
    var status429 = 0
    var errors = 0
    var journeysStarted = 0
    var journeysCompleted = 0
    var journeysUnfinished = 0
    var journeysByName: [String: Int] = [:]
    var journeysWaitedForDevice = 0
    var journeysDropped = 0
    var journeysUnfinishedByName: [String: Int] = [:]
    /// Per journey name: time from the intended start to the end of the last step, completed journeys only.
    var journeyDurations: [String: LatencyHistogram] = [:]
    var lateStarts = 0
    var startLag = LatencyHistogram()
    var firstLaunches = 0
    var clickedFirstLaunches = 0
    var deferredByMethod: [String: Int] = [:]
    /// Every attribution record (only when ``keepsMergeInputs``).
    var attribution: [AttributionRecord] = []
    var clicks = 0
    var clicksByStatus: [String: Int] = [:]
    var clipboardPlaced = 0
    var clickLatency = LatencyHistogram()
    var opens = 0
    var opensEmitted = 0
    var openLatency = LatencyHistogram()
    var openOutcomes: [OpenOutcome: Int] = [:]
    /// Universal Link opens by phase, then by route cache on (`true`) or off, then by outcome.
    var outageOpens: [OpenPhase: [Bool: [OpenOutcome: Int]]] = [:]
    /// Time to link of the opens during an outage that got a link, all and by route cache on/off.
    var outageTimeToLink = LatencyHistogram()
    var outageTimeToLinkByCache: [Bool: LatencyHistogram] = [:]
    var outageOverWorstCase = 0

    init(interval: Double, lateThreshold: Double, outage: OutagePlan?, keepsMergeInputs: Bool) {
        self.interval = interval
        self.lateThreshold = lateThreshold
        self.outage = outage
        self.keepsMergeInputs = keepsMergeInputs
    }

    mutating func consume(_ record: RecorderRecord) {
        switch record {
        case .attempt(let attempt, let body): add(attempt, offContractBody: body)
        case .call(let call): add(call)
        case .journeyStarted(let name, let at, let lag): journeyStarted(name: name, at: at, lag: lag)
        case .journeyWaitedForDevice: journeysWaitedForDevice += 1
        case .journeyDropped(let intended):
            intervals[Int(Swift.max(0, intended) / interval), default: IntervalStats()].dropped += 1
            journeysDropped += 1
        case .journeyEnded(let name, let completed, let duration):
            journeyEnded(name: name, completed: completed, duration: duration)
        case .click(let status, let latency, let placed):
            clicks += 1
            clicksByStatus[status.map(String.init) ?? "error", default: 0] += 1
            clickLatency.record(latency)
            if placed { clipboardPlaced += 1 }
        case .open(let open): add(open)
        case .attribution(let record):
            firstLaunches += 1
            if record.clickedLinkId != nil { clickedFirstLaunches += 1 }
            deferredByMethod[record.matchMethod ?? "NONE", default: 0] += 1
            if keepsMergeInputs { attribution.append(record) }
        case .ledger: break
        }
    }

    /// An attempt the run cancelled (error kind `cancelled`: the grace deadline, a disposed
    /// instance) never finished: it is counted, under `cancelled`, but its elapsed time stays out of
    /// every latency histogram and it is not an HTTP error.
    private mutating func add(_ record: AttemptRecord, offContractBody: Data?) {
        let cancelled = record.status == nil && (record.errorKind?.isCancellation ?? false)
        let isError = !cancelled && (record.status.map { $0 >= 500 } ?? true)
        // Mutated in place: a copy out of the dictionary would copy each histogram's buckets per attempt.
        inPlace(&endpoints[record.endpoint, default: EndpointStats()]) { stats in
            if let offContractBody, stats.firstOffContractBody == nil {
                stats.firstOffContractBody = ContractBodyShape.excerpt(offContractBody)
            }
            stats.attempts += 1
            stats.byStatus[record.status.map(String.init) ?? (record.errorKind ?? .other).rawValue, default: 0] += 1
            if !cancelled {
                stats.attemptLatency.record(record.end - record.actualStart)
                stats.attemptLatencyFromIntended.record(record.end - record.intendedStart)
            }
            stats.requestBytes += record.requestBytes
            stats.responseBytes += record.responseBytes
            if record.offContract { stats.offContract += 1 }
        }
        let fromIntended = record.end - record.intendedStart
        inPlace(&intervals[Int(record.actualStart / interval), default: IntervalStats()]) { bucket in
            bucket.attempts += 1
            if record.status == 429 { bucket.status429 += 1 }
            if isError { bucket.errors += 1 }
            if !cancelled {
                bucket.latencySum += fromIntended
                bucket.latencyCount += 1
                bucket.latencyMax = Swift.max(bucket.latencyMax, fromIntended)
            }
        }
        attempts += 1
        if record.status == 429 { status429 += 1 }
        if isError { errors += 1 }
    }

    private mutating func add(_ call: CallRecord) {
        inPlace(&endpoints[call.endpoint, default: EndpointStats()]) { stats in
            stats.calls += 1
            stats.callOutcomes[call.outcome, default: 0] += 1
            stats.attemptsPerCall[String(call.attempts), default: 0] += 1
            // Only calls that finished by themselves have a latency; cut ones are counted by outcome.
            if call.outcome.isFinished { stats.callLatency.record(call.end - call.intendedStart) }
        }
        calls += 1
    }

    private mutating func journeyStarted(name: String, at: Double, lag: Double) {
        let late = lag > lateThreshold
        inPlace(&intervals[Int(at / interval), default: IntervalStats()]) { bucket in
            bucket.journeys += 1
            if late { bucket.lateStarts += 1 }
        }
        journeysStarted += 1
        journeysByName[name, default: 0] += 1
        startLag.record(lag)
        if late { lateStarts += 1 }
    }

    private mutating func journeyEnded(name: String, completed: Bool, duration: Double) {
        if completed {
            journeysCompleted += 1
            journeyDurations[name, default: LatencyHistogram()].record(duration)
        } else {
            journeysUnfinished += 1
            journeysUnfinishedByName[name, default: 0] += 1
        }
    }

    /// Where an `open` landed and how long it took; with an outage plan, also its phase, and its
    /// time to link when it ran during the outage.
    private mutating func add(_ record: OpenRecord) {
        opens += 1
        openOutcomes[record.outcome, default: 0] += 1
        if !record.outcome.isLost {
            opensEmitted += 1
            openLatency.record(record.latency)
        }
        guard let outage, record.universal else { return }
        let phase = outage.phase(of: record.start)
        outageOpens[phase, default: [:]][record.routeCache, default: [:]][record.outcome, default: 0] += 1
        guard phase == .during else { return }
        if !record.outcome.isLost {
            outageTimeToLink.record(record.latency)
            outageTimeToLinkByCache[record.routeCache, default: LatencyHistogram()].record(record.latency)
        }
        if record.latency > outage.worstCaseSeconds { outageOverWorstCase += 1 }
    }
}
