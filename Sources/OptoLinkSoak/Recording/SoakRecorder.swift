import Foundation
import OptoLink
import OptoLinkHTTP
import OptoLinkStaging
import Synchronization
import SoakRecords
import SoakVerdicts

/// Takes what a run records (attempts, public calls, journeys, clicks, opens, deferred matches,
/// ledger rows) and publishes it as one ordered stream of records to a fixed list of consumers
/// (``RecordConsumers``): the CSV files, the verdicts' live passes and notes, the aggregates of
/// `summary.json` and the progress line's numbers.
///
/// One recorder per run, shared by every virtual device (it is also the recording middleware, see
/// `SoakRecorder+Middleware.swift`). A recording thread only queues an event; the events are
/// applied in order, by the writer thread (``startWriter(backlogLimit:)``) or inline without one,
/// under one lock, which the consumers are called under. Memory stays bounded: rows go to disk,
/// only calls still open are kept (``CallTracker``), and every aggregate has a fixed size.
package final class SoakRecorder: Sendable {
    /// What the events build, changed only while events are applied (``apply(_:in:)``) and by ``finish()``.
    struct State {
        var calls: CallTracker
        var consumers: RecordConsumers
        /// Events taken off ``SoakRecorder/queue`` and not applied yet, newest first.
        var inbox: [RecorderEvent] = []
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

    /// The run's time axis, owned by the run: the recorder reads it to time each attempt.
    package let timeline: RunTimeline
    let control: RunControl?
    /// A journey starting later than this after its intended start counts as a late start.
    package let lateThreshold: Double
    /// Seconds per `timeline` interval in `summary.json`.
    package let interval: Double
    /// The profile's `/data` outage windows, to place each open (`nil`: no outage declared).
    package let outage: OutagePlan?
    let state: Mutex<State>
    let queue = Mutex(Queue())
    let writer = Mutex<LowPriorityThread?>(nil)
    let writerStop = Atomic<Bool>(false)
    /// What ``stopWriter()`` measured: seconds it took to apply the backlog left at the run's end.
    let drainSeconds = Mutex<Double?>(nil)
    /// `attempts.csv` and `calls.csv`.
    let csv: RecordCSVFiles
    /// The verdicts' passes and the summary notes (see ``RecordFeed``: a request never waits for them).
    let feed: RecordFeed

    var attemptsCSV: CSVStreamWriter { csv.attempts }
    package var callsCSV: CSVStreamWriter { csv.calls }

    /// Creates `attempts.csv` and `calls.csv` in `directory`.
    /// - Throws: when the files cannot be created.
    /// - Parameter timeline: the run's clock (the run creates it and hands it to whoever needs it).
    /// - Parameter interval: seconds per timeline interval (choose so a run has ≤ ~600).
    /// - Parameter control: the run's control; an attempt cancelled once it has cut the run's
    ///   work is recorded as `cancelled_by_run` (other cancellations, e.g. a relaunch disposing
    ///   the previous instance, as `cancelled`).
    /// - Parameter verdictContext: what the live verdict passes know besides the records (its
    ///   `runStartEpoch` is set to the timeline's origin).
    /// - Parameter keepsMergeInputs: whether to keep what `merge` needs from a shard (every
    ///   attribution record, every launch's `deviceId`): O(launches) memory, so only `--shard` asks.
    /// - Parameter quietCloseMargin: seconds a call with no attempt in flight stays open beyond the
    ///   longest back-off the contract allows after its last attempt, before it is closed by itself.
    package init(
        directory: URL, timeline: RunTimeline, lateThreshold: Double = 0.010, interval: Double = 1,
        control: RunControl? = nil, outage: OutagePlan? = nil, verdictContext: VerdictContext = VerdictContext(),
        keepsMergeInputs: Bool = false, quietCloseMargin: Double = 10
    ) throws {
        var context = verdictContext
        context.runStartEpoch = timeline.originEpoch
        feed = RecordFeed(context: context)
        self.timeline = timeline
        self.outage = outage
        self.control = control
        self.lateThreshold = lateThreshold
        self.interval = max(0.001, interval)
        csv = try RecordCSVFiles(directory: directory)
        let aggregate = RunAggregate(
            interval: self.interval, lateThreshold: lateThreshold, outage: outage, keepsMergeInputs: keepsMergeInputs)
        state = Mutex(
            State(
                calls: CallTracker(quietCloseMargin: max(0, quietCloseMargin), keepsMergeInputs: keepsMergeInputs),
                consumers: RecordConsumers(csv: csv, feed: feed, aggregate: aggregate)))
    }

    // MARK: Recording

    /// Notes the start of an attempt of `launch`; returns its intended start.
    func beginAttempt(launch: DeviceLaunch, context: OptoLinkRequestContext, actualStart: Double) -> Double {
        let claimed = context.attempt == 1 ? StepContext.current?.claim(callId: context.callId) : nil
        let intended = Swift.min(claimed ?? actualStart, actualStart)
        submit(
            .began(
                key: CallKey(launch, callId: context.callId), endpoint: ContractEndpoint(context.endpoint),
                intendedStart: intended, start: actualStart))
        return intended
    }

    /// Records a finished attempt (its record is published, and its call closed if due).
    ///
    /// - Parameter bodies: the attempt's request and response bodies, when the record's
    ///   correlation id, Retry-After `N` and off-contract flag are still to be read from them
    ///   (``AttemptBodies/classify(_:)``); `nil` when the record has them already.
    func endAttempt(record: AttemptRecord, bodies: AttemptBodies? = nil) {
        submit(.ended(record: record, bodies: bodies))
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

    /// Notes the SDK `deviceId` a virtual device's launch uses (`launch` 1-based; a fresh
    /// install gets a new one, a relaunch keeps it).
    package func deviceIdRecorded(device: String, launch: Int? = nil, deviceId: String) {
        submit(.deviceId(device: device, launch: launch, deviceId: deviceId))
    }

    /// Hands one server ledger row to the consumers (the verdicts reconcile it), as the server stores
    /// it (embedded emulator) or at the end (a remote backend's ledger file), in order with the attempts.
    package func ledgerRecorded(_ entry: LedgerRow) {
        submit(.record(.ledger(entry)))
    }

    /// Records a journey start: `lag` = actual − intended start in seconds.
    package func journeyStarted(name: String, lag: Double) {
        submit(.record(.journeyStarted(name: name, at: timeline.now(), lag: lag)))
    }

    /// Records that a journey found every device busy and waited for one (open model).
    package func journeyWaitedForDevice() {
        submit(.record(.journeyWaitedForDevice))
    }

    /// Records an arrival the open model planned at `intended` (seconds since run start) that
    /// never started; its timeline row is the planned one.
    package func journeyDropped(intended: Double) {
        submit(.record(.journeyDropped(intended: intended)))
    }

    /// Records a journey end. `completed == false`: the run cut it short (a step never
    /// started, or a step's work was cancelled). `duration`: seconds from the journey's
    /// intended start to its end; kept per journey name for completed journeys only.
    package func journeyEnded(name: String, completed: Bool, duration: Double) {
        submit(.record(.journeyEnded(name: name, completed: completed, duration: duration)))
    }

    /// Records one browser click (status `nil` = no response).
    package func clickRecorded(status: Int?, latency: Double, clipboardPlaced: Bool) {
        submit(.record(.click(status: status, latency: latency, clipboardPlaced: clipboardPlaced)))
    }

    /// Records one `open` step: where it landed and how long it took.
    package func openRecorded(_ record: OpenRecord) {
        submit(.record(.open(record)))
    }

    /// Records a first launch's deferred-match result (input of the attribution verdict).
    package func deferredMatchRecorded(_ record: AttributionRecord) {
        submit(.record(.attribution(record)))
    }

    /// Stops the writer (if any), publishes every call still open (calls with attempts in flight
    /// get outcome `unfinished`, ending now), then flushes and closes both CSV files.
    package func finish() {
        stopWriter()
        let now = timeline.now()
        state.withLock { s in
            applyQueued(in: &s)
            s.calls.finish(now: now, into: &s.consumers)
        }
        csv.close()
    }

    // MARK: Applying events

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
            state.withLock { s in
                applyQueued(in: &s)
                if let event = pending.take() { apply(event, in: &s) }
            }
        case .some(true): applySome(limit: 256)
        case .some(false): break
        }
    }

    /// Applies every event queued so far (a reader's view then includes every event recorded before it).
    func applyPending() {
        state.withLock { applyQueued(in: &$0) }
    }

    /// Applies queued events, in queue order, until none is left (`state` held).
    func applyQueued(in s: inout State) {
        while applyBatch(limit: .max, in: &s) > 0 {}
    }

    /// Applies up to `limit` queued events under one hold of `state`; returns how many.
    @discardableResult
    func applySome(limit: Int) -> Int {
        state.withLock { applyBatch(limit: limit, in: &$0) }
    }

    /// Applies up to `limit` events from the inbox, refilled from the queue when empty (one swap,
    /// so recording threads never wait while events are applied); returns how many. The inbox
    /// holds the queue reversed, so each event is moved out with `popLast` (no copy of it, no
    /// destroy of the array's slot afterwards).
    private func applyBatch(limit: Int, in s: inout State) -> Int {
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

    /// Turns one event into what it publishes: an ended attempt publishes its record before its
    /// call can close (the call's row never reaches a consumer before its attempts).
    private func apply(_ event: consuming RecorderEvent, in s: inout State) {
        switch consume event {
        case .began(let key, let endpoint, let intended, let start):
            s.calls.began(key: key, endpoint: endpoint, intendedStart: intended, start: start)
        case .ended(var record, let bodies):
            bodies?.classify(&record)
            s.consumers.consume(.attempt(record, offContractBody: record.offContract ? bodies?.response : nil))
            s.calls.ended(record: record, into: &s.consumers)
        case .closed(let launch, let callIds, let outcome, let now):
            s.calls.closed(launch: launch, callIds: callIds, outcome: outcome, now: now, into: &s.consumers)
        case .deviceId(let device, let launch, let deviceId):
            s.calls.deviceId(device: device, launch: launch, deviceId: deviceId)
        case .record(let record): s.consumers.consume(record)
        }
    }
}
