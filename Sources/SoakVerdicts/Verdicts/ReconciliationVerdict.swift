import SoakSupport
import SoakRecords

/// Double-count reconciliation: the client's view of each write (its call outcome) joined with
/// the server's ledger (docs/CONTRACT.md §4, "Ledger"), with exactly one outcome per call.
///
/// Events join on the correlation id the soak tester puts in property `opl_corr`
/// (`run:device:seq`), read from the parsed request and ledger bodies. Session, identity and
/// identity-clear writes carry no such id: they join on the SDK `deviceId` the call's launch
/// used (a reinstall gets a new one), then each ledger row goes to the call of that device and
/// endpoint whose time span holds its arrival (else the nearest span; among equals, the call
/// with fewest rows so far, then the earliest). Calls whose `deviceId` is unknown are compared as one
/// group per endpoint the same way.
/// Per call: **delivered once**; **duplicated** (stored more than once — both copies of a
/// retried write, say); **lost** (client saw success, server stored nothing); **landed unknown**
/// (client saw a failure, the server stored it once); **not delivered** (failure, nothing stored
/// — consistent); **not covered** (success, nothing stored, but the call ended after the last
/// row of a ledger that had not caught up with the run: see ``LedgerCoverage``). Per endpoint
/// also **unexpected**: rows of this run no call accounts for.
package struct ReconciliationVerdict: Verdict {
    /// The reconciliation of one endpoint.
    package struct EndpointCounts: Sendable, Codable, Equatable {
        /// Client calls judged; always the sum of the six per-call outcomes.
        package var calls = 0
        package var deliveredOnce = 0
        /// Calls stored more than once.
        package var duplicated = 0
        /// Ledger rows beyond the first for those calls.
        package var duplicateWrites = 0
        package var lost = 0
        package var landedUnknown = 0
        package var notDelivered = 0
        /// Successful calls past the end of a ledger that had not caught up (``LedgerCoverage``).
        package var notCovered = 0
        /// Ledger rows of this run that no call accounts for.
        package var unexpected = 0
        /// `correlation_id`, `device`, `endpoint_total` or a `+`-joined mix.
        package var joinedBy = ""

        package init() {}

        /// The count of one per-call outcome.
        package subscript(outcome: ReconcileOutcome) -> Int {
            switch outcome {
            case .deliveredOnce: deliveredOnce
            case .duplicated: duplicated
            case .lost: lost
            case .landedUnknown: landedUnknown
            case .notDelivered: notDelivered
            case .notCovered: notCovered
            }
        }
    }

    /// `false` when no ledger was available; then `endpoints` is empty and no metric is emitted.
    package var available: Bool
    /// Why the section is empty, or remarks on the join.
    package var note: String?
    /// Endpoint name → counts (`events`, `session`, `identity`, `identity_clear`).
    package var endpoints: [String: EndpointCounts]
    /// Ledger rows that belong to other traffic (another run's prefix, unknown devices, or before this run started).
    package var ignoredLedgerEntries: Int
    /// Set when the ledger read after the run had not caught up with the run's writes.
    package var incomplete: LedgerCoverage?

    package static let notAvailable = ReconciliationVerdict(
        available: false,
        note:
            "not available: no ledger (the embedded emulator's, --ledger FILE, "
            + "or --ledger http(s)://HOST/__admin/ledger of a remote serve)",
        endpoints: [:], ignoredLedgerEntries: 0)

    /// Not available for a stated reason (a `--ledger` file that could not be read).
    package static func notAvailable(because reason: String) -> ReconciliationVerdict {
        ReconciliationVerdict(
            available: false, note: "not available: \(reason)", endpoints: [:], ignoredLedgerEntries: 0)
    }

    /// Joins `calls` with `ledger`; a `nil` ledger gives the "not available" section.
    /// - Parameter deviceIds: virtual device → SDK `deviceId`, used for calls whose launch's
    ///   `deviceId` is not on the record.
    package static func evaluate(
        calls: [CallRecord], ledger: [LedgerRow]?, deviceIds: [String: String], runStartEpoch: Double,
        edgeToleranceSeconds: Double, launchDeviceIds: [DeviceLaunch: String] = [:]
    ) -> ReconciliationVerdict {
        Verdicts.run(
            Self.self, calls: calls,
            context: VerdictContext(
                configuration: VerdictsConfiguration(edgeToleranceSeconds: edgeToleranceSeconds), ledger: ledger,
                runStartEpoch: runStartEpoch, deviceIds: deviceIds, launchDeviceIds: launchDeviceIds))
    }

    package static let key = "reconciliation"

    package static var metricPatterns: [MetricPattern] {
        [
            MetricPattern(.oneOf(writeEndpoints.map(\.rawValue)), .oneOf(countNames)),
            MetricPattern("reconcile", .oneOf(totalNames)),
        ]
    }

    /// The endpoints that write to the server's ledger.
    static let writeEndpoints = ContractEndpoint.allCases.filter(\.writesLedger)

    /// The per-endpoint counts, as metric suffixes.
    static let countNames = ReconcileOutcome.allCases.map(\.rawValue) + ["duplicate_writes", "unexpected"]
    /// The run-wide totals, as metric suffixes of `reconcile.`.
    static let totalNames = [ReconcileOutcome.duplicated, .lost, .notCovered].map(\.rawValue)

    package static func makePass(_ context: VerdictContext) -> Pass { Pass(context: context) }

    package var notExercised: [String: String] {
        guard available else { return [:] }
        var result: [String: String] = [:]
        for endpoint in Self.writeEndpoints where (endpoints[endpoint.rawValue]?.calls ?? 0) == 0 {
            for name in Self.countNames {
                result[endpoint.rawValue + "." + name] = "no \(endpoint.rawValue) write was made"
            }
        }
        if endpoints.values.allSatisfy({ $0.calls == 0 }) { result["reconcile"] = "no write was made" }
        // An incomplete ledger cannot show that a call was not lost: a `lost` threshold is not judged.
        if let incomplete, result["reconcile"] == nil {
            result["reconcile.lost"] = incomplete.description
            for (name, counts) in endpoints where counts.notCovered > 0 {
                result[name + ".lost"] = incomplete.description
            }
        }
        return result
    }

    /// Joins calls with ledger rows as both stream by. With a finite horizon
    /// (``VerdictContext/horizonSeconds``), a call is judged once the stream is a horizon past
    /// its end (every row it could own has arrived by then), and rows that old no call still
    /// open can claim are judged too; then both are forgotten. With an infinite horizon (rows
    /// known up front, or coming only after every call) everything waits for ``finish()``.
    /// Both give the same counts as long as no call lasts longer than the horizon.
    package struct Pass: VerdictPass {
        /// One non-event write as the join needs it.
        struct Write {
            package var start: Double
            package var end: Double
            package var ok: Bool
            package var rows = 0
        }

        /// An event call waiting for the rows of its correlation id (no heap storage of its own).
        struct EventCall {
            /// `nil` when the call's id is not a correlation id: no row can be its.
            var corr: CorrelationKey?
            package var end: Double
            package var ok: Bool
        }

        /// One correlation id while it has rows not yet claimed or calls not yet judged.
        struct Correlated {
            /// Ledger rows no judged call has claimed yet.
            package var rows = 0
            /// When the latest of those rows reached the pass in the calls' stream time (run
            /// seconds; see ``Pass/take(_:)-entry``); `-infinity` with no rows.
            package var latest = -Double.infinity
            /// Calls of this id not judged yet.
            package var pending = 0
        }

        let context: VerdictContext
        let horizon: Double
        let earliest: Double
        var ignored = 0
        var endpoints: [String: EndpointCounts] = [:]
        /// Numbers for the run ids and devices of correlation ids.
        var keys = CorrelationKeys()
        /// Correlation id → its unclaimed rows and unjudged calls (one entry for both).
        var correlated: [CorrelationKey: Correlated] = [:]
        /// Run ids (as numbered by `keys`) of the event calls seen.
        var runIds = Set<Int32>()
        /// Event calls not judged yet, in arrival order.
        var pendingEvents: [EventCall] = []
        var pendingHead = 0
        var uncorrelated = 0
        /// Virtual device → `deviceId`, learnt from event rows (fallback for records without one).
        var learnt: [String: String] = [:]
        /// Non-event calls not judged yet and rows not shared out yet, per group (one entry, one
        /// copy of the `deviceId`, for both).
        var groups: [WriteGroup: GroupState] = [:]
        /// `deviceId`s of calls seen, with the latest call end (pruned a horizon after it).
        var knownDeviceIds: [String: Double] = [:]
        var joins: [ContractEndpoint: Set<String>] = [:]
        /// The latest stream time of the calls and attempts seen (run seconds). Ledger rows do not
        /// move it: the server's clock may be skewed (a remote ledger) or not the run's (a test's
        /// virtual clock), so a row waits a horizon of the *calls'* time before it is judged.
        var now = -Double.infinity
        var lastPrune = -Double.infinity
        /// The ledger's latest row and the run's latest successful write.
        var reach = LedgerReach()
        /// Set at the end when a ledger that may lag has not caught up: successful calls without
        /// a row that ended after this run second are not covered.
        var coveredUntil: Double?

        /// Calls of one endpoint from one SDK `deviceId` (`nil`: unknown, compared as one group).
        struct WriteGroup: Hashable {
            package var endpoint: ContractEndpoint
            package var deviceId: String?
        }

        /// What one group holds: its calls not judged yet, and its ledger rows not shared out yet
        /// (arrival in run seconds, and when the row reached the pass in the calls' stream time).
        struct GroupState {
            package var writes: [Write] = []
            package var rows: [(time: Double, seen: Double)] = []
        }

        init(context: VerdictContext) {
            self.context = context
            // Rows known up front cannot be matched to calls that come later, so they keep everything.
            horizon = context.ledger == nil && context.ledgerLive ? context.horizonSeconds : .infinity
            let margin = max(1, context.configuration.edgeToleranceSeconds)
            earliest = context.runStartEpoch > 0 ? context.runStartEpoch - margin : -Double.infinity
            for (_, id) in context.launchDeviceIds { knownDeviceIds[id] = .infinity }
            for (_, id) in context.deviceIds { knownDeviceIds[id] = .infinity }
            for entry in context.ledger ?? [] { take(entry) }
        }

        /// How many calls and rows the pass holds (bounded by the horizon; for tests and the soak bench).
        package var retained: Int {
            pendingEvents.count - pendingHead + correlated.values.reduce(0) { $0 + ($1.rows > 0 ? 1 : 0) }
                + groups.values.reduce(0) { $0 + $1.rows.count + $1.writes.count }
        }

        package mutating func consume(_ record: RunRecord) {
            guard context.ledgerAvailable else { return }
            switch record {
            case .ledger(let entry):
                take(entry)
            case .call(let call):
                advance(to: call.end)
                reach.take(call)
                guard ReconciliationVerdict.writeEndpoints.contains(call.endpoint) else { return }
                take(call)
            case .attempt(let attempt):
                reach.take(attempt)
                advance(to: attempt.end)
            case .attribution:
                return
            }
        }

        private mutating func take(_ entry: LedgerRow) {
            reach.take(entry)
            guard let endpoint = ContractEndpoint(rawValue: entry.endpoint) else {
                ignored += 1
                return
            }
            let time = entry.arrivedAt - context.runStartEpoch
            let seen = now.isFinite ? now : time
            if endpoint == .events {
                guard let raw = entry.properties?["opl_corr"], let corr = CorrelationId(raw) else {
                    ignored += 1
                    return
                }
                inPlace(&correlated[keys.key(corr), default: Correlated()]) { entry in
                    entry.rows += 1
                    entry.latest = max(entry.latest, seen)
                }
                let device = String(corr.device)
                if learnt[device] == nil { learnt[device] = entry.deviceId }
            } else if entry.arrivedAt >= earliest {
                groups[WriteGroup(endpoint: endpoint, deviceId: entry.deviceId), default: GroupState()].rows
                    .append((time, seen))
            } else {
                ignored += 1
            }
        }

        private mutating func take(_ call: CallRecord) {
            if call.endpoint == .events {
                guard let corr = call.correlationId else {
                    uncorrelated += 1
                    return
                }
                let key = keys.key(corr)
                if let key {
                    runIds.insert(key.run)
                    correlated[key, default: Correlated()].pending += 1
                }
                pendingEvents.append(EventCall(corr: key, end: call.end, ok: call.outcome.isSuccess))
                return
            }
            let deviceId =
                call.deviceId ?? context.launchDeviceIds[CallKey(call).deviceLaunch]
                ?? context.deviceIds[call.device]
            groups[
                WriteGroup(endpoint: call.endpoint, deviceId: deviceId ?? learnt[call.device]), default: GroupState()
            ]
            .writes.append(Write(start: call.start, end: call.end, ok: call.outcome.isSuccess))
            if let deviceId { knownDeviceIds[deviceId] = max(knownDeviceIds[deviceId] ?? -.infinity, call.end) }
        }

        /// Moves stream time on; every horizon/8 of it, judges and drops what is a horizon old.
        private mutating func advance(to time: Double) {
            guard time.isFinite, time > now else { return }
            now = time
            guard horizon.isFinite, now - lastPrune >= max(1, horizon / 8) else { return }
            lastPrune = now
            settle(before: now - horizon)
        }

        /// Judges event calls that ended before `cutoff`, shares out rows older than `cutoff`, and
        /// judges the writes that ended before it.
        private mutating func settle(before cutoff: Double) {
            var events = endpoints[ContractEndpoint.events.rawValue] ?? EndpointCounts()
            while pendingHead < pendingEvents.count, pendingEvents[pendingHead].end < cutoff {
                let call = pendingEvents[pendingHead]
                pendingHead += 1
                guard let key = call.corr, var entry = correlated[key] else {
                    events.record(ok: call.ok, stored: 0, covered: covers(call.end))
                    continue
                }
                events.record(ok: call.ok, stored: entry.rows, covered: covers(call.end))
                entry.rows = 0
                entry.latest = -.infinity
                entry.pending -= 1
                correlated[key] = entry.pending > 0 ? entry : nil
            }
            if pendingHead > 1024, pendingHead * 2 > pendingEvents.count {
                pendingEvents.removeFirst(pendingHead)
                pendingHead = 0
            }
            // Rows no pending call claims, a horizon old: another run's, or a write no call made.
            // Keys first, then removal: removing while iterating would copy the whole table.
            let unclaimed = correlated.filter { $0.value.rows > 0 && $0.value.latest < cutoff && $0.value.pending == 0 }
            for (key, entry) in unclaimed {
                correlated.removeValue(forKey: key)
                if runIds.contains(key.run) { events.unexpected += entry.rows } else { ignored += entry.rows }
            }
            endpoints[ContractEndpoint.events.rawValue] = events
            if cutoff.isFinite { knownDeviceIds = knownDeviceIds.filter { $0.value >= cutoff - horizon } }
            shareOut(rowsBefore: cutoff, writesBefore: cutoff)
        }

        /// Shares non-event rows seen before `rowsBefore` (calls' stream time) among their group's open calls, then
        /// judges the calls that ended before `writesBefore`.
        private mutating func shareOut(rowsBefore: Double, writesBefore: Double) {
            // Rows of unknown devices form the one `nil` group.
            let knownIds = Set(knownDeviceIds.keys).union(learnt.values)
            var due: [WriteGroup: [Double]] = [:]
            // Keys first, then changes: changing entries while iterating would copy the whole table.
            let withOldRows = groups.compactMap { $0.value.rows.contains { $0.seen < rowsBefore } ? $0.key : nil }
            for group in withOldRows {
                guard var state = groups.removeValue(forKey: group) else { continue }
                let old = state.rows.filter { $0.seen < rowsBefore }
                state.rows.removeAll { $0.seen < rowsBefore }
                let key =
                    knownIds.contains(group.deviceId ?? "") || !state.writes.isEmpty
                    ? group : WriteGroup(endpoint: group.endpoint, deviceId: nil)
                if !state.rows.isEmpty || !state.writes.isEmpty { groups[group] = state }
                due[key, default: []] += old.map(\.time)
            }
            for endpoint in ReconciliationVerdict.writeEndpoints where endpoint != .events {
                endpoints[endpoint.rawValue] = endpoints[endpoint.rawValue] ?? EndpointCounts()
            }
            let withWrites = groups.compactMap { $0.value.writes.isEmpty ? nil : $0.key }
            for group in Set(due.keys).union(withWrites) {
                let times = due[group] ?? []
                var calls = groups[group]?.writes ?? []
                var counts = endpoints[group.endpoint.rawValue] ?? EndpointCounts()
                if calls.isEmpty {
                    if group.deviceId == nil { ignored += times.count } else { counts.unexpected += times.count }
                } else {
                    joins[group.endpoint, default: []].insert(group.deviceId == nil ? "endpoint_total" : "device")
                    Self.share(times, among: &calls)
                    for call in calls where call.end < writesBefore {
                        counts.record(ok: call.ok, stored: call.rows, covered: covers(call.end))
                    }
                    calls.removeAll { $0.end < writesBefore }
                    if var state = groups.removeValue(forKey: group) {
                        state.writes = calls
                        if !state.writes.isEmpty || !state.rows.isEmpty { groups[group] = state }
                    }
                }
                endpoints[group.endpoint.rawValue] = counts
            }
        }

        package mutating func finish() -> ReconciliationVerdict {
            guard context.ledgerAvailable else { return .notAvailable }
            if context.ledgerMayLag {
                coveredUntil = reach.coveredUntil(
                    runStartEpoch: context.runStartEpoch, tolerance: context.configuration.edgeToleranceSeconds)
            }
            settle(before: .infinity)
            var events = endpoints[ContractEndpoint.events.rawValue] ?? EndpointCounts()
            events.joinedBy = "correlation_id"
            endpoints[ContractEndpoint.events.rawValue] = events
            for (endpoint, how) in joins {
                endpoints[endpoint.rawValue]?.joinedBy = ["device", "endpoint_total"].filter(how.contains)
                    .joined(separator: "+")
            }
            for endpoint in ReconciliationVerdict.writeEndpoints where endpoints[endpoint.rawValue]?.joinedBy == "" {
                endpoints[endpoint.rawValue]?.joinedBy = "device"
            }
            let note =
                uncorrelated > 0 ? "\(uncorrelated) event call(s) carried no correlation id and were not judged" : nil
            var verdict = ReconciliationVerdict(
                available: true, note: note, endpoints: endpoints, ignoredLedgerEntries: ignored)
            if let coveredUntil {
                verdict.incomplete = LedgerCoverage(
                    ledgerReachesSeconds: coveredUntil.isFinite ? coveredUntil : nil,
                    lastWriteSeconds: reach.lastWriteSeconds,
                    notCovered: endpoints.values.reduce(0) { $0 + $1.notCovered })
            }
            return verdict
        }

        /// Whether the ledger reaches a call that ended at `end` (run seconds).
        private func covers(_ end: Double) -> Bool { coveredUntil.map { end <= $0 } ?? true }

        /// Gives each arrival time (run seconds) to one call: one whose span holds it, else the
        /// nearest; among equals, the one with fewest rows so far, then the earliest. The server
        /// stores a write while one of the call's attempts is open, so a row lies in its own
        /// call's span; nearness only decides for a skewed clock (a remote ledger).
        static func share(_ times: [Double], among calls: inout [Write]) {
            calls.sort { ($0.start, $0.end) < ($1.start, $1.end) }
            for time in times.sorted() {
                var best: (index: Int, distance: Double, rows: Int)?
                for (index, call) in calls.enumerated() {
                    let distance = max(0, call.start - time, time - call.end)
                    let candidate = (index, distance, call.rows)
                    if let current = best, (current.distance, current.rows) <= (distance, call.rows) { continue }
                    best = candidate
                }
                if let best { calls[best.index].rows += 1 }
            }
        }
    }

    package func addMetrics(to metrics: inout [String: Double]) {
        guard available else { return }
        var duplicated = 0
        var lost = 0
        var notCovered = 0
        for (name, counts) in endpoints {
            metrics["\(name).delivered_once"] = Double(counts.deliveredOnce)
            metrics["\(name).duplicated"] = Double(counts.duplicated)
            metrics["\(name).duplicate_writes"] = Double(counts.duplicateWrites)
            metrics["\(name).lost"] = Double(counts.lost)
            metrics["\(name).landed_unknown"] = Double(counts.landedUnknown)
            metrics["\(name).not_delivered"] = Double(counts.notDelivered)
            metrics["\(name).unexpected"] = Double(counts.unexpected)
            metrics["\(name).not_covered"] = Double(counts.notCovered)
            duplicated += counts.duplicated
            lost += counts.lost
            notCovered += counts.notCovered
        }
        metrics["reconcile.duplicated"] = Double(duplicated)
        metrics["reconcile.lost"] = Double(lost)
        metrics["reconcile.not_covered"] = Double(notCovered)
    }
}

extension ReconciliationVerdict.EndpointCounts {
    /// One call's outcome, from what the client saw, how many ledger rows are its, and whether
    /// the ledger reaches the call's end (a successful call without a row is lost only then).
    package mutating func record(ok: Bool, stored: Int, covered: Bool = true) {
        calls += 1
        switch stored {
        case 0 where ok && !covered: notCovered += 1
        case 0 where ok: lost += 1
        case 0: notDelivered += 1
        case 1 where ok: deliveredOnce += 1
        case 1: landedUnknown += 1
        default:
            duplicated += 1
            duplicateWrites += stored - 1
        }
    }
}

extension ReconciliationVerdict.EndpointCounts {
    /// Decodes every count, 0 when absent (a `summary.json` written before `notCovered` existed).
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func count(_ key: CodingKeys) throws -> Int { try container.decodeIfPresent(Int.self, forKey: key) ?? 0 }
        self.init()
        calls = try count(.calls)
        deliveredOnce = try count(.deliveredOnce)
        duplicated = try count(.duplicated)
        duplicateWrites = try count(.duplicateWrites)
        lost = try count(.lost)
        landedUnknown = try count(.landedUnknown)
        notDelivered = try count(.notDelivered)
        notCovered = try count(.notCovered)
        unexpected = try count(.unexpected)
        joinedBy = try container.decodeIfPresent(String.self, forKey: .joinedBy) ?? ""
    }
}
