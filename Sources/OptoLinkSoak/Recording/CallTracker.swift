import SoakRecords
import SoakSupport

/// Assembles call records from the attempts' events: keeps each call while it is open, and
/// publishes its row when it closes (its public call returned, its launch ended, it went quiet,
/// or the run finished). It also keeps the SDK `deviceId` each row carries.
///
/// Memory stays bounded: only calls still open are kept, and a launch's `deviceId` goes with its
/// last call (unless ``keepsMergeInputs``).
package struct CallTracker {
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
        /// ``CallTracker/quietCloseDeadline(after:margin:)``); `nil` while an attempt is in flight.
        var quietUntil: Double?
    }

    /// Seconds a call with no attempt in flight stays open beyond the longest back-off the contract
    /// allows after its last attempt, before it is closed by itself.
    let quietCloseMargin: Double
    /// Whether every launch's `deviceId` is kept (what `merge` needs from a shard).
    let keepsMergeInputs: Bool

    private(set) var openCalls: [CallKey: OpenCall] = [:]
    private(set) var deviceIds: [String: String] = [:]
    /// The SDK `deviceId` of each launch, while the launch or one of its calls is open.
    private(set) var launchDeviceIds: [DeviceLaunch: String] = [:]
    /// Open call ids per launch (a launch's end closes its own calls without scanning every open
    /// call), and launches that are over (their `deviceId` goes with their last call). A launch's
    /// set stays, empty, between its calls, so a launch's next call reuses its storage: no
    /// allocation per call. It goes when the launch is over.
    private(set) var openPerLaunch: [DeviceLaunch: Set<UInt64>] = [:]
    private(set) var endedLaunches = Set<DeviceLaunch>()
    /// Run second of the last sweep for quiet calls (see ``closeQuietCalls(now:into:)``).
    private var lastQuietSweep = -Double.infinity

    init(quietCloseMargin: Double, keepsMergeInputs: Bool) {
        self.quietCloseMargin = quietCloseMargin
        self.keepsMergeInputs = keepsMergeInputs
    }

    /// Notes a launch's SDK `deviceId` (`launch` `nil`: the device's latest install only).
    mutating func deviceId(device: String, launch: Int?, deviceId: String) {
        deviceIds[device] = deviceId
        if let launch { launchDeviceIds[DeviceLaunch(device: device, launch: launch)] = deviceId }
    }

    /// Notes an attempt's start: opens its call, or counts one more attempt of it.
    mutating func began(
        key: CallKey, endpoint: ContractEndpoint, intendedStart: Double, start: Double
    ) {
        let known: Void? = openCalls.modifyValue(forKey: key) { call in
            call.attempts += 1
            call.inFlight += 1
            call.quietUntil = nil
        }
        guard known == nil else { return }
        var call = OpenCall(
            device: key.device, launch: key.launch, endpoint: endpoint, intendedStart: intendedStart, start: start,
            end: start)
        call.attempts = 1
        call.inFlight = 1
        openCalls[key] = call
        openPerLaunch[key.deviceLaunch, default: []].insert(key.callId)
    }

    /// Notes an attempt's end (its record is already published): first closes the calls that went
    /// quiet before it ended (none reaches the consumers long after its end), then its own call
    /// when a close was asked for and no attempt of it is in flight.
    mutating func ended<C: RecordConsumer>(record: AttemptRecord, into consumers: inout C) {
        closeQuietCalls(now: record.end, into: &consumers)
        let key = CallKey(record)
        // Changed in place: one lookup, no copy of the call out of the dictionary and back.
        let due = openCalls.modifyValue(forKey: key) { call in
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
        if due == true { close(key, into: &consumers) }
    }

    /// Marks calls of `launch` as finished once their attempts end: `callIds` (with the public
    /// call's outcome, `nil` = derive from the last attempt), or every open call of the launch when
    /// `callIds` is `nil` (the launch is over). A call the run cancelled ends at `now`.
    mutating func closed<C: RecordConsumer>(
        launch: DeviceLaunch, callIds: [UInt64]?, outcome: CallOutcome?, now: Double, into consumers: inout C
    ) {
        if callIds == nil { endedLaunches.insert(launch) }
        for callId in callIds ?? (openPerLaunch[launch] ?? []).sorted() {
            let key = CallKey(launch, callId: callId)
            let idle = openCalls.modifyValue(forKey: key) { call in
                call.closeRequested = true
                // A launch cut by the run closes all its calls as cancelled; one that already got its 2xx stays ok.
                let succeeded = call.lastStatus.map { (200..<300).contains($0) } ?? false
                if let outcome, !(outcome == CallOutcome.cancelledByRun && succeeded) {
                    call.thrownOutcome = outcome
                }
                if outcome == CallOutcome.cancelledByRun { call.end = Swift.max(call.end, now) }
                return call.inFlight == 0
            }
            if idle == true { close(key, into: &consumers) }
        }
        if callIds == nil { forgetLaunchIfDone(launch) }
    }

    /// Closes every call still open, in key order: calls with attempts in flight get outcome
    /// `unfinished`, ending at `now` (the run's end).
    mutating func finish<C: RecordConsumer>(now: Double, into consumers: inout C) {
        for key in Self.labelOrder(openCalls.keys) {
            openCalls.modifyValue(forKey: key) { call in
                guard call.inFlight > 0 else { return }
                call.thrownOutcome = CallOutcome.unfinished
                call.end = Swift.max(call.end, now)
            }
            close(key, into: &consumers)
        }
    }

    /// When a call whose last attempt is `record` is over even if nobody closes it, run seconds: the
    /// longest back-off the contract allows before a retry (the 429's `N`, else the table's 5 s cap;
    /// docs/CONTRACT.md §2) plus `margin`. A fire-and-forget call (the session check-in, a link
    /// resolution) has no public call whose return closes it, and its launch may last minutes: it
    /// is closed here, so its row reaches the verdicts' passes within their horizon.
    package static func quietCloseDeadline(after record: AttemptRecord, margin: Double) -> Double {
        let backoff = record.retryAfterSeconds.map { Double(max(0, $0)) } ?? 5
        return record.end + max(backoff, 5) + margin
    }

    /// Closes the calls with no attempt in flight whose quiet deadline is before `now` (run
    /// seconds), at most once a second of run time, in key order.
    private mutating func closeQuietCalls<C: RecordConsumer>(now: Double, into consumers: inout C) {
        guard now.isFinite, now - lastQuietSweep >= 1 else { return }
        lastQuietSweep = now
        let due = openCalls.filter { $0.value.inFlight == 0 && ($0.value.quietUntil ?? .infinity) < now }.keys
        for key in Self.labelOrder(due) { close(key, into: &consumers) }
    }

    /// `keys` in the order their rows go to `calls.csv`: by label text (`d1#10` before `d1#9`), then call id.
    private static func labelOrder(_ keys: some Collection<CallKey>) -> [CallKey] {
        keys.map { (label: $0.deviceLaunch.label, key: $0) }.sorted {
            ($0.label, $0.key.callId) < ($1.label, $1.key.callId)
        }
        .map(\.key)
    }

    /// Drops what a launch keeps once the launch is over and its last call closed.
    private mutating func forgetLaunchIfDone(_ launch: DeviceLaunch) {
        guard endedLaunches.contains(launch), openPerLaunch[launch]?.isEmpty ?? true else { return }
        endedLaunches.remove(launch)
        openPerLaunch.removeValue(forKey: launch)
        if !keepsMergeInputs { launchDeviceIds.removeValue(forKey: launch) }
    }

    /// Removes the call and publishes its row.
    private mutating func close<C: RecordConsumer>(_ key: CallKey, into consumers: inout C) {
        guard let call = openCalls.removeValue(forKey: key) else { return }
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
            deviceId: launchDeviceIds[key.deviceLaunch] ?? deviceIds[call.device])
        _ = openPerLaunch.modifyValue(forKey: key.deviceLaunch) { ids in ids.remove(key.callId) }
        forgetLaunchIfDone(key.deviceLaunch)
        consumers.consume(.call(record))
    }
}
