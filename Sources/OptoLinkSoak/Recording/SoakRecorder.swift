import Foundation
import OptoLink
import OptoLinkHTTP
import OptoLinkStaging
import Synchronization
import SoakSupport
import SoakRecords
import SoakVerdicts

/// Records every HTTP attempt and public call of a run: streams rows to `attempts.csv` and
/// `calls.csv` and keeps bounded aggregates (HDR histograms, counts) for `summary.json`.
///
/// One recorder per run, shared by every virtual device (it is also the recording
/// middleware, see `SoakRecorder+Middleware.swift`). Memory stays bounded: rows go to disk,
/// only calls still open are kept, histograms have a fixed size, and the verdicts run live
/// (``VerdictStream``) as each row is recorded, each pass keeping only what its horizon needs.
package final class SoakRecorder: Sendable {
    struct OpenCall {
        var device: String
        var launch: Int
        var endpoint: ContractEndpoint
        var attempts = 0
        var inFlight = 0
        var intendedStart: Double
        var start: Double
        var end: Double
        var lastStatus: Int?
        /// The last attempt's error kind when it got no response (`cancelled`, `timed_out`, …).
        var lastErrorKind: AttemptErrorKind?
        var closeRequested = false
        var thrownOutcome: CallOutcome?
        var correlationId: String?
        /// Run second after which, with no attempt begun, the call is over whoever awaits it (see
        /// ``SoakRecorder/quietCloseDeadline(after:margin:)``); `nil` while an attempt is in flight.
        var quietUntil: Double?
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

    /// What the attempts and calls feed: the recorder's writer applies these (see ``RecorderEvent``),
    /// so a request thread only queues its events.
    struct CallState {
        /// The attempt half of each interval (`attempts`, `status429`, `errors`, latencies).
        var intervals: [Int: IntervalStats] = [:]
        var openCalls: [CallKey: OpenCall] = [:]
        var endpoints: [ContractEndpoint: EndpointStats] = [:]
        var allAttempts = LatencyHistogram()
        var attempts = 0
        var calls = 0
        var status429 = 0
        var errors = 0
        var firstAttemptStart: Double?
        var lastAttemptEnd: Double = 0
        var deviceIds: [String: String] = [:]
        /// The SDK `deviceId` of each launch, while the launch or one of its calls is open.
        var launchDeviceIds: [DeviceLaunch: String] = [:]
        /// Open call ids per launch (a launch's end closes its own calls without scanning every open
        /// call), and launches that are over (their `deviceId` goes with their last call).
        var openPerLaunch: [DeviceLaunch: Set<UInt64>] = [:]
        var endedLaunches = Set<DeviceLaunch>()
        /// Run second of the last sweep for quiet calls (see ``SoakRecorder/closeQuietCalls(now:in:)``).
        var lastQuietSweep = -Double.infinity
        /// Events taken off ``SoakRecorder/queue`` and not applied yet, newest first.
        var inbox: [RecorderEvent] = []
    }

    /// Journeys, clicks, opens and deferred matches: recorded where they happen, under their own lock.
    struct State {
        /// The journey half of each interval (`journeys`, `lateStarts`).
        var intervals: [Int: IntervalStats] = [:]
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
        /// Every attribution record (only when ``keepsMergeInputs``: a shard's manifest needs them).
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
    }

    /// Events recorded and not yet taken by whoever applies them.
    struct Queue {
        var events: [RecorderEvent] = []
        /// Whether a writer thread applies the events (``startWriter(backlogLimit:)``); without one,
        /// the thread that records applies them at once.
        var writerRunning = false
        var backlogLimit = Int.max
        /// The most events that waited at once.
        var backlogPeak = 0
    }

    package let timeline: RunTimeline
    let control: RunControl?
    /// A journey starting later than this after its intended start counts as a late start.
    package let lateThreshold: Double
    let attemptsCSV: CSVStreamWriter
    let callsCSV: CSVStreamWriter
    let state = Mutex(State())
    /// Attempts, calls and the `deviceId`s their rows carry; changed only while events are applied
    /// (``apply(_:in:)``) and by ``finish()``.
    let callState = Mutex(CallState())
    let queue = Mutex(Queue())
    let writer = Mutex<LowPriorityThread?>(nil)
    let writerStop = Atomic<Bool>(false)
    /// What ``stopWriter()`` measured: seconds it took to apply the backlog left at the run's end.
    let drainSeconds = Mutex<Double?>(nil)
    /// The verdicts' passes and the summary notes, fed live in the order rows are recorded
    /// (see ``RecordFeed``: a request never waits for them).
    let feed: RecordFeed
    /// Whether the recorder keeps what `merge` needs from a shard (every attribution record, every
    /// launch's `deviceId`): O(launches) memory, so only a shard run (`--shard`) asks for it.
    let keepsMergeInputs: Bool
    /// The profile's `/data` outage windows, to place each open (`nil`: no outage declared).
    package let outage: OutagePlan?
    /// Seconds a call with no attempt in flight stays open beyond the longest back-off the contract
    /// allows after its last attempt, before the recorder closes it by itself.
    package let quietCloseMargin: Double

    /// Creates `attempts.csv` and `calls.csv` in `directory`.
    /// - Throws: when the files cannot be created.
    /// Seconds per `timeline` interval in `summary.json`.
    package let interval: Double

    /// - Parameter interval: seconds per timeline interval (choose so a run has ≤ ~600).
    /// - Parameter control: the run's control; an attempt cancelled once it has cut the run's
    ///   work is recorded as `cancelled_by_run` (other cancellations, e.g. a relaunch disposing
    ///   the previous instance, as `cancelled`).
    /// - Parameter verdictContext: what the live verdict passes know besides the records (its
    ///   `runStartEpoch` is set to the timeline's origin).
    package init(
        directory: URL, timeline: RunTimeline, lateThreshold: Double = 0.010, interval: Double = 1,
        control: RunControl? = nil, outage: OutagePlan? = nil, verdictContext: VerdictContext = VerdictContext(),
        keepsMergeInputs: Bool = false, quietCloseMargin: Double = 10
    ) throws {
        self.keepsMergeInputs = keepsMergeInputs
        self.quietCloseMargin = max(0, quietCloseMargin)
        var context = verdictContext
        context.runStartEpoch = timeline.originEpoch
        feed = RecordFeed(context: context)
        self.timeline = timeline
        self.outage = outage
        self.control = control
        self.lateThreshold = lateThreshold
        self.interval = max(0.001, interval)
        attemptsCSV = try CSVStreamWriter(
            url: directory.appendingPathComponent("attempts.csv"), header: AttemptRecord.csvHeader)
        callsCSV = try CSVStreamWriter(url: directory.appendingPathComponent("calls.csv"), header: CallRecord.csvHeader)
    }

    // MARK: Attempts and calls

    /// Notes the start of an attempt of `launch`; returns its intended start.
    func beginAttempt(launch: DeviceLaunch, context: OptoLinkRequestContext, actualStart: Double) -> Double {
        let claimed = context.attempt == 1 ? StepContext.current?.claim(callId: context.callId) : nil
        let intended = Swift.min(claimed ?? actualStart, actualStart)
        submit(
            .began(
                key: CallKey(launch, callId: context.callId), endpoint: ContractEndpoint(context.endpoint),
                intendedStart: intended,
                start: actualStart))
        return intended
    }

    /// Records a finished attempt (writes its CSV row, updates aggregates, closes its call if due).
    ///
    /// An attempt the run cancelled (error kind `cancelled`: the grace deadline, a disposed
    /// instance) never finished: it is counted, under `cancelled`, but its elapsed time stays
    /// out of every latency histogram and it is not an HTTP error.
    ///
    /// - Parameter bodies: the attempt's request and response bodies, when the record's
    ///   correlation id, Retry-After `N` and off-contract flag are still to be read from them
    ///   (``AttemptBodies/classify(_:)``); `nil` when the record has them already.
    func endAttempt(record: AttemptRecord, bodies: AttemptBodies? = nil) {
        submit(.ended(record: record, bodies: bodies))
    }

    /// Hands one server ledger row to the live verdicts (reconciliation), as the server stores it
    /// (embedded emulator) or at the end (a remote backend's ledger file), in order with the attempts.
    package func ledgerRecorded(_ entry: LedgerRow) {
        submit(.record(.ledger(entry)))
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

    /// Marks calls of `launch` as finished once their attempts end: `callIds` (with the
    /// public call's outcome, `nil` = derive from the last attempt), or every open call of
    /// the launch when `callIds` is `nil` (the launch is over).
    ///
    /// A call the run cancelled (outcome `cancelled`) ends when it is closed: its end is the
    /// time of the cancellation, not the end of its last attempt, so a call cut in a back-off
    /// sleep shows how long it really ran.
    package func closeCalls(_ launch: DeviceLaunch, callIds: [UInt64]?, outcome: CallOutcome?) {
        submit(.closed(launch: launch, callIds: callIds, outcome: outcome, now: timeline.now()))
    }

    /// Stops the writer (if any), emits every call still open (calls with attempts in flight get
    /// outcome `unfinished`, ending now), then flushes and closes both CSV files.
    package func finish() {
        stopWriter()
        let now = timeline.now()
        callState.withLock { s in
            applyQueued(in: &s)
            for key in Self.labelOrder(s.openCalls.keys) {
                if var call = s.openCalls[key], call.inFlight > 0 {
                    call.thrownOutcome = CallOutcome.unfinished
                    call.end = Swift.max(call.end, now)
                    s.openCalls[key] = call
                }
                if let record = close(key, in: &s) { emit(record) }
            }
        }
        attemptsCSV.close()
        callsCSV.close()
    }

    // MARK: Applying events (the writer)

    /// Records `event`: with a writer running, queues it (and, past the backlog limit, helps apply
    /// the queue, so memory stays bounded when the writer falls behind); without one, applies
    /// it at once, after whatever an earlier writer left queued. The event is moved, never copied,
    /// on its way (an event is a few hundred bytes with half a dozen counted references: a copy
    /// and its destroy cost more than the queueing).
    private func submit(_ event: consuming RecorderEvent) {
        var pending: RecorderEvent? = consume event
        let queued: Bool? = queue.withLock { q in
            guard q.writerRunning, let event = pending.take() else { return nil }
            q.events.append(event)
            q.backlogPeak = Swift.max(q.backlogPeak, q.events.count)
            return q.events.count > q.backlogLimit
        }
        switch queued {
        case .none:
            callState.withLock { s in
                applyQueued(in: &s)
                if let event = pending.take() { apply(event, in: &s) }
            }
        case .some(true): applySome(limit: 256)
        case .some(false): break
        }
    }

    /// Applies every event queued so far (a reader's view then includes every event recorded before it).
    func applyPending() {
        callState.withLock { applyQueued(in: &$0) }
    }

    /// Applies queued events, in queue order, until none is left (`callState` held).
    private func applyQueued(in s: inout CallState) {
        while applyBatch(limit: .max, in: &s) > 0 {}
    }

    /// Applies up to `limit` queued events under one hold of `callState`; returns how many.
    @discardableResult
    private func applySome(limit: Int) -> Int {
        callState.withLock { applyBatch(limit: limit, in: &$0) }
    }

    /// Applies up to `limit` events from the inbox, refilled from the queue when empty (one swap,
    /// so recording threads never wait while events are applied); returns how many. The inbox
    /// holds the queue reversed, so each event is moved out with `popLast` (no copy of it, no
    /// destroy of the array's slot afterwards).
    private func applyBatch(limit: Int, in s: inout CallState) -> Int {
        if s.inbox.isEmpty {
            queue.withLock { swap(&$0.events, &s.inbox) }
            s.inbox.reverse()
        }
        var applied = 0
        while applied < limit, let event = s.inbox.popLast() {
            applied += 1
            apply(event, in: &s)
        }
        return applied
    }

    private func apply(_ event: consuming RecorderEvent, in s: inout CallState) {
        switch consume event {
        case .began(let key, let endpoint, let intended, let start):
            applyBegan(key: key, endpoint: endpoint, intendedStart: intended, start: start, in: &s)
        case .ended(var record, let bodies):
            bodies?.classify(&record)
            if record.offContract, s.endpoints[record.endpoint]?.firstOffContractBody == nil,
                let response = bodies?.response
            {
                s.endpoints[record.endpoint, default: EndpointStats()].firstOffContractBody =
                    ContractBodyShape.excerpt(response)
            }
            applyEnded(record: record, in: &s)
        case .closed(let launch, let callIds, let outcome, let now):
            applyClosed(launch: launch, callIds: callIds, outcome: outcome, now: now, in: &s)
        case .deviceId(let device, let launch, let deviceId):
            s.deviceIds[device] = deviceId
            if let launch { s.launchDeviceIds[DeviceLaunch(device: device, launch: launch)] = deviceId }
        case .record(let record): feed.consume(record)
        }
    }

    private func applyBegan(
        key: CallKey, endpoint: ContractEndpoint, intendedStart: Double, start: Double, in s: inout CallState
    ) {
        let known: Void? = s.openCalls.modifyValue(forKey: key) { call in
            call.attempts += 1
            call.inFlight += 1
            call.quietUntil = nil
        }
        if known == nil {
            var call = OpenCall(
                device: key.device, launch: key.launch, endpoint: endpoint, intendedStart: intendedStart,
                start: start, end: start)
            call.attempts = 1
            call.inFlight = 1
            s.openCalls[key] = call
            s.openPerLaunch[key.deviceLaunch, default: []].insert(key.callId)
        }
        if s.firstAttemptStart == nil { s.firstAttemptStart = start }
    }

    private func applyEnded(record: AttemptRecord, in s: inout CallState) {
        // The attempt reaches the passes before its call can close (below), never after the call's row.
        attemptsCSV.appendRow(record.appendCSVRow(to:))
        feed.consume(.attempt(record))
        let cancelled = record.status == nil && (record.errorKind?.isCancellation ?? false)
        let isError = !cancelled && (record.status.map { $0 >= 500 } ?? true)
        // Calls over by themselves, swept here: none reaches the passes long after its end.
        for call in closeQuietCalls(now: record.end, in: &s) { emit(call) }
        // Mutated in place: a copy out of the dictionary would copy each histogram's buckets per attempt.
        inPlace(&s.endpoints[record.endpoint, default: EndpointStats()]) { stats in
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
        if !cancelled { s.allAttempts.record(record.end - record.actualStart) }
        let slot = Int(record.actualStart / interval)
        let fromIntended = record.end - record.intendedStart
        inPlace(&s.intervals[slot, default: IntervalStats()]) { bucket in
            bucket.attempts += 1
            if record.status == 429 { bucket.status429 += 1 }
            if isError { bucket.errors += 1 }
            if !cancelled {
                bucket.latencySum += fromIntended
                bucket.latencyCount += 1
                bucket.latencyMax = Swift.max(bucket.latencyMax, fromIntended)
            }
        }
        s.attempts += 1
        if record.status == 429 { s.status429 += 1 }
        if isError { s.errors += 1 }
        s.lastAttemptEnd = Swift.max(s.lastAttemptEnd, record.end)
        let key = CallKey(record)
        // Changed in place: one lookup, no copy of the call out of the dictionary and back.
        let due = s.openCalls.modifyValue(forKey: key) { call in
            call.inFlight -= 1
            call.end = Swift.max(call.end, record.end)
            call.lastStatus = record.status
            call.lastErrorKind = record.errorKind
            if call.correlationId == nil { call.correlationId = record.correlationId }
            if call.inFlight == 0 {
                call.quietUntil = Self.quietCloseDeadline(after: record, margin: quietCloseMargin)
            }
            return call.closeRequested && call.inFlight == 0
        }
        if due == true, let finished = close(key, in: &s) { emit(finished) }
    }

    private func applyClosed(
        launch: DeviceLaunch, callIds: [UInt64]?, outcome: CallOutcome?, now: Double, in s: inout CallState
    ) {
        if callIds == nil { s.endedLaunches.insert(launch) }
        func closeCall(_ callId: UInt64) {
            let key = CallKey(launch, callId: callId)
            let idle = s.openCalls.modifyValue(forKey: key) { call in
                call.closeRequested = true
                // A launch cut by the run closes all its calls as cancelled; one that already got its 2xx stays ok.
                let succeeded = call.lastStatus.map { (200..<300).contains($0) } ?? false
                if let outcome, !(outcome == CallOutcome.cancelledByRun && succeeded) {
                    call.thrownOutcome = outcome
                }
                if outcome == CallOutcome.cancelledByRun { call.end = Swift.max(call.end, now) }
                return call.inFlight == 0
            }
            guard idle == true, let record = close(key, in: &s) else { return }
            emit(record)
        }
        if let callIds {
            for callId in callIds { closeCall(callId) }
        } else {
            for callId in (s.openPerLaunch[launch] ?? []).sorted() { closeCall(callId) }
            forgetLaunchIfDone(launch, in: &s)
        }
    }

    /// When a call whose last attempt is `record` is over even if nobody closes it, run seconds: the
    /// longest back-off the contract allows before a retry (the 429's `N`, else the table's 5 s cap;
    /// docs/CONTRACT.md §2) plus `margin`. A fire-and-forget call (the session check-in, a link
    /// resolution) has no public call whose return closes it, and its launch may last minutes: it
    /// is closed here, so its row reaches the verdicts' passes within their horizon.
    static func quietCloseDeadline(after record: AttemptRecord, margin: Double) -> Double {
        let backoff = record.retryAfterSeconds.map { Double(max(0, $0)) } ?? 5
        return record.end + max(backoff, 5) + margin
    }

    /// Closes the calls with no attempt in flight whose quiet deadline is before `now` (run
    /// seconds), at most once a second of run time; returns their rows in key order.
    private func closeQuietCalls(now: Double, in s: inout CallState) -> [CallRecord] {
        guard now.isFinite, now - s.lastQuietSweep >= 1 else { return [] }
        s.lastQuietSweep = now
        let due = s.openCalls.filter { $0.value.inFlight == 0 && ($0.value.quietUntil ?? .infinity) < now }.keys
        return Self.labelOrder(due).compactMap { close($0, in: &s) }
    }

    /// `keys` in the order their rows go to `calls.csv`: by label text (`d1#10` before `d1#9`), then call id.
    private static func labelOrder(_ keys: some Collection<CallKey>) -> [CallKey] {
        keys.map { (label: $0.deviceLaunch.label, key: $0) }.sorted {
            ($0.label, $0.key.callId) < ($1.label, $1.key.callId)
        }
        .map(\.key)
    }

    /// Writes a closed call's row and hands it to the live verdicts and notes.
    private func emit(_ call: CallRecord) {
        callsCSV.appendRow(call.appendCSVRow(to:))
        feed.consume(.call(call))
    }

    /// Drops what a launch keeps once the launch is over and its last call closed.
    private func forgetLaunchIfDone(_ launch: DeviceLaunch, in s: inout CallState) {
        guard s.endedLaunches.contains(launch), s.openPerLaunch[launch] == nil else { return }
        s.endedLaunches.remove(launch)
        if !keepsMergeInputs { s.launchDeviceIds.removeValue(forKey: launch) }
    }

    private func close(_ key: CallKey, in s: inout CallState) -> CallRecord? {
        guard let call = s.openCalls.removeValue(forKey: key) else { return nil }
        let derived: CallOutcome =
            switch call.lastStatus {
            case .some(let status) where (200..<300).contains(status): CallOutcome.ok
            case .some: CallOutcome.apiError
            case .none where call.lastErrorKind?.isCancellation ?? false: .cancelledByRun
            case .none: CallOutcome.connectionError
            }
        let record = CallRecord(
            device: call.device, launch: call.launch, callId: key.callId, endpoint: call.endpoint,
            attempts: call.attempts, intendedStart: call.intendedStart, start: call.start, end: call.end,
            outcome: call.thrownOutcome ?? derived, finalStatus: call.lastStatus, correlationId: call.correlationId,
            deviceId: s.launchDeviceIds[key.deviceLaunch] ?? s.deviceIds[call.device])
        let emptied = s.openPerLaunch.modifyValue(forKey: key.deviceLaunch) { ids in
            ids.remove(key.callId)
            return ids.isEmpty
        }
        if emptied == true { s.openPerLaunch.removeValue(forKey: key.deviceLaunch) }
        forgetLaunchIfDone(key.deviceLaunch, in: &s)
        inPlace(&s.endpoints[call.endpoint, default: EndpointStats()]) { stats in
            stats.calls += 1
            stats.callOutcomes[record.outcome, default: 0] += 1
            stats.attemptsPerCall[String(call.attempts), default: 0] += 1
            // Only calls that finished by themselves have a latency; cut ones are counted by outcome.
            if record.outcome.isFinished { stats.callLatency.record(call.end - call.intendedStart) }
        }
        s.calls += 1
        return record
    }

    // MARK: Journeys, clicks, opens, deferred matches

    /// Records a journey start: `lag` = actual − intended start in seconds.
    package func journeyStarted(name: String, lag: Double) {
        let slot = Int(timeline.now() / interval)
        state.withLock { s in
            s.intervals[slot, default: IntervalStats()].journeys += 1
            if lag > lateThreshold { s.intervals[slot, default: IntervalStats()].lateStarts += 1 }
            s.journeysStarted += 1
            s.journeysByName[name, default: 0] += 1
            s.startLag.record(lag)
            if lag > lateThreshold { s.lateStarts += 1 }
        }
    }

    /// Records that a journey found every device busy and waited for one (open model).
    package func journeyWaitedForDevice() {
        state.withLock { $0.journeysWaitedForDevice += 1 }
    }

    /// Records an arrival the open model planned at `intended` (seconds since run start) that
    /// never started; its timeline row is the planned one.
    package func journeyDropped(intended: Double) {
        let slot = Int(Swift.max(0, intended) / interval)
        state.withLock { s in
            s.intervals[slot, default: IntervalStats()].dropped += 1
            s.journeysDropped += 1
        }
    }

    /// Records a journey end. `completed == false`: the run cut it short (a step never
    /// started, or a step's work was cancelled). `duration`: seconds from the journey's
    /// intended start to its end; kept per journey name for completed journeys only.
    package func journeyEnded(name: String, completed: Bool, duration: Double) {
        state.withLock { s in
            if completed {
                s.journeysCompleted += 1
                s.journeyDurations[name, default: LatencyHistogram()].record(duration)
            } else {
                s.journeysUnfinished += 1
                s.journeysUnfinishedByName[name, default: 0] += 1
            }
        }
    }

    /// Records one browser click (status `nil` = no response).
    package func clickRecorded(status: Int?, latency: Double, clipboardPlaced: Bool) {
        state.withLock { s in
            s.clicks += 1
            s.clicksByStatus[status.map(String.init) ?? "error", default: 0] += 1
            s.clickLatency.record(latency)
            if clipboardPlaced { s.clipboardPlaced += 1 }
        }
    }

    /// Records one `open` step: where it landed and how long it took; with an outage plan, also
    /// its phase, and its time to link when it ran during the outage.
    package func openRecorded(_ record: OpenRecord) {
        let outage = self.outage
        state.withLock { s in
            s.opens += 1
            s.openOutcomes[record.outcome, default: 0] += 1
            if !record.outcome.isLost {
                s.opensEmitted += 1
                s.openLatency.record(record.latency)
            }
            guard let outage, record.universal else { return }
            let phase = outage.phase(of: record.start)
            s.outageOpens[phase, default: [:]][record.routeCache, default: [:]][record.outcome, default: 0] += 1
            guard phase == .during else { return }
            if !record.outcome.isLost {
                s.outageTimeToLink.record(record.latency)
                s.outageTimeToLinkByCache[record.routeCache, default: LatencyHistogram()].record(record.latency)
            }
            if record.latency > outage.worstCaseSeconds { s.outageOverWorstCase += 1 }
        }
    }

    /// Records a first launch's deferred-match result (input of the attribution verdict).
    package func deferredMatchRecorded(_ record: AttributionRecord) {
        state.withLock { s in
            s.firstLaunches += 1
            if record.clickedLinkId != nil { s.clickedFirstLaunches += 1 }
            s.deferredByMethod[record.matchMethod ?? "NONE", default: 0] += 1
            if keepsMergeInputs { s.attribution.append(record) }
        }
        submit(.record(.attribution(record)))
    }

    /// Notes the SDK `deviceId` a virtual device's launch uses (`launch` 1-based; a fresh
    /// install gets a new one, a relaunch keeps it).
    package func deviceIdRecorded(device: String, launch: Int? = nil, deviceId: String) {
        submit(.deviceId(device: device, launch: launch, deviceId: deviceId))
    }

    /// The SDK `deviceId` of each launch still open (or with a call still open).
    package var launchDeviceIds: [DeviceLaunch: String] {
        callState.withLock { s in
            applyQueued(in: &s)
            return s.launchDeviceIds
        }
    }

    /// Every attribution record so far (empty unless the recorder ``keepsMergeInputs``).
    package var attribution: [AttributionRecord] { state.withLock { $0.attribution } }

    /// Virtual device → the SDK `deviceId` of its latest install.
    package var deviceIds: [String: String] {
        callState.withLock { s in
            applyQueued(in: &s)
            return s.deviceIds
        }
    }
}

/// One thing a request thread records about the attempts and calls; the recorder applies these in
/// the order they were recorded (``SoakRecorder/submit(_:)``).
enum RecorderEvent: Sendable {
    /// An attempt began: its call's key, where it goes, and its intended and actual start (run seconds).
    case began(key: CallKey, endpoint: ContractEndpoint, intendedStart: Double, start: Double)
    /// An attempt ended, with its row (and the bodies its last fields are read from).
    case ended(record: AttemptRecord, bodies: AttemptBodies?)
    /// Calls were closed at run second `now` (``SoakRecorder/closeCalls(_:callIds:outcome:)``).
    case closed(launch: DeviceLaunch, callIds: [UInt64]?, outcome: CallOutcome?, now: Double)
    /// A launch's SDK `deviceId` (rows of its calls carry it).
    case deviceId(device: String, launch: Int?, deviceId: String)
    /// A record only the verdicts' passes take (a ledger row, a deferred match), kept in order with the attempts.
    case record(RunRecord)
}

/// An attempt's request and response bodies (`nil`: none, or no response), kept until its row is
/// written: the fields read from them cost more than the rest of the row.
struct AttemptBodies: Sendable {
    var request: Data?
    var response: Data?

    /// Fills the row's correlation id (events), Retry-After `N` (a 429) and off-contract flag (a
    /// success) from the bodies (``AttemptClassification``).
    func classify(_ record: inout AttemptRecord) {
        record.correlationId = AttemptClassification.correlationId(endpoint: record.endpoint, body: request)
        guard let response, let status = record.status else { return }
        record.retryAfterSeconds = AttemptClassification.retryAfterSeconds(status: status, body: response)
        record.offContract = AttemptClassification.isOffContract(
            endpoint: record.endpoint, status: status, body: response)
    }
}

extension SoakRecorder {
    /// The writer's nice value. Beside hey on 2 saturated cores, nice 0, 5 and 10 give the same
    /// request rate within the noise, but at 10 the starved writer lets 90k–145k events wait in
    /// a 6 s run, at 0 about 500, at 5 10k–26k: 5 lets a burst of requests go first and still
    /// keeps up.
    static let writerNice: Int32 = 5

    /// Applies the attempts' and calls' events on a thread of their own, at low priority, so a
    /// request thread only appends to a queue instead of waiting for the aggregates, the CSV rows
    /// and the verdicts' passes (in a busy run they cost several times the request itself).
    /// Live readers (progress, metrics, early stop) see the state as applied so far: at most a
    /// few milliseconds behind while the writer keeps up (it naps 1–8 ms when the queue is empty).
    ///
    /// - Parameter backlogLimit: events that may wait; past it, each recording thread applies a
    ///   batch itself before it goes on, so memory stays bounded (a few hundred bytes per event,
    ///   its request and response bodies included).
    /// - Throws: when the thread cannot be started (the recorder then applies events inline, as
    ///   without a writer).
    package func startWriter(backlogLimit: Int = 100_000) throws {
        try writer.withLock { w in
            guard w == nil else { return }
            writerStop.store(false, ordering: .releasing)
            queue.withLock { q in
                q.writerRunning = true
                q.backlogLimit = Swift.max(1, backlogLimit)
            }
            do {
                let thread = try LowPriorityThread.start(name: "opl-recorder", nice: Self.writerNice) { [self] in
                    // Naps of 1 ms while events come, doubling to 8 ms while none do: an idle
                    // run wakes the writer about 125 times a second, a busy one finds a batch.
                    var nap: UInt32 = 1_000
                    while true {
                        let stopping = writerStop.load(ordering: .acquiring)
                        if applySome(limit: 256) > 0 {
                            nap = 1_000
                        } else {
                            if stopping { return }
                            usleep(nap)
                            nap = Swift.min(nap * 2, 8_000)
                        }
                    }
                }
                w = thread
            } catch {
                queue.withLock { $0.writerRunning = false }
                throw error
            }
        }
    }

    /// Stops the writer: recording threads apply their events themselves again, and the writer
    /// applies what was queued before it exits. Measures how long that took (``recordingLag``).
    func stopWriter() {
        let taken = writer.withLock { w in
            let running = w
            w = nil
            return running
        }
        guard let running = taken else { return }
        let stoppedAt = ContinuousClock.now
        queue.withLock { $0.writerRunning = false }
        writerStop.store(true, ordering: .releasing)
        running.join()
        let drained = ContinuousClock.now - stoppedAt
        drainSeconds.withLock {
            $0 = Double(drained.components.seconds) + Double(drained.components.attoseconds) * 1e-18
        }
    }

    /// How far the writer fell behind in this run, or `nil` when it ran without one.
    package var recordingLag: SoakSummary.RecordingLag? {
        guard let drain = drainSeconds.withLock({ $0 }) else { return nil }
        return SoakSummary.RecordingLag(backlogPeak: queue.withLock { $0.backlogPeak }, drainSeconds: drain)
    }
}
