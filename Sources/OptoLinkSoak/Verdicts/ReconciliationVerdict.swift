import OptoLink
import OptoLinkStaging

/// Double-count reconciliation: the client's view of each write (its call outcome) joined with
/// the server's ledger (docs/CONTRACT.md §4, "Ledger").
///
/// Events join on the correlation id the soak tester puts in property `opl_corr`
/// (`run:device:seq`). Session, identity and identity-clear writes carry no such id: they join
/// per device (the virtual device's SDK `deviceId`, from the driver or learnt from the event
/// join) by counts, and devices that cannot be mapped are compared as one lump per endpoint.
/// Per endpoint: **delivered once**; **duplicated** (stored more than once); **lost** (client
/// saw success, server stored nothing); **landed unknown** (client saw a failure, the server
/// stored it); **not delivered** (failure, nothing stored — consistent); **unexpected** (stored
/// under this run's correlation prefix but never sent).
public struct ReconciliationVerdict: Verdict {
    /// The reconciliation of one endpoint.
    public struct EndpointCounts: Sendable, Codable, Equatable {
        /// Client calls judged.
        public var calls = 0
        public var deliveredOnce = 0
        /// Calls stored more than once.
        public var duplicated = 0
        /// Ledger rows beyond the first for those calls.
        public var duplicateWrites = 0
        public var lost = 0
        public var landedUnknown = 0
        public var notDelivered = 0
        public var unexpected = 0
        /// `correlation_id`, `device`, `endpoint_total` or a `+`-joined mix.
        public var joinedBy = ""

        public init() {}
    }

    /// `false` when no ledger was available; then `endpoints` is empty and no metric is emitted.
    public var available: Bool
    /// Why the section is empty, or remarks on the join.
    public var note: String?
    /// Endpoint name → counts (`events`, `session`, `identity`, `identity_clear`).
    public var endpoints: [String: EndpointCounts]
    /// Ledger rows that belong to other traffic (another run's prefix, or before this run started).
    public var ignoredLedgerEntries: Int

    static let notAvailable = ReconciliationVerdict(
        available: false, note: "not available: no ledger (embedded emulator's ledger route or --ledger FILE)",
        endpoints: [:], ignoredLedgerEntries: 0)

    /// Joins `calls` with `ledger`; a `nil` ledger gives the "not available" section.
    public static func evaluate(
        calls: [CallRecord], ledger: [StagingLedgerEntry]?, deviceIds: [String: String], runStartEpoch: Double,
        edgeToleranceSeconds: Double
    ) -> ReconciliationVerdict {
        guard let ledger else { return .notAvailable }
        var ignored = 0
        var endpoints: [String: EndpointCounts] = [:]

        // Events, by correlation id.
        let eventCalls = calls.filter { $0.endpoint == .events }
        let runIds = Set(eventCalls.compactMap { $0.correlationId.flatMap(CorrelationId.init)?.runId })
        var stored: [String: Int] = [:]
        var learntDeviceIds = deviceIds
        var otherRows: [StagingLedgerEntry] = []
        let earliest = runStartEpoch > 0 ? runStartEpoch - max(1, edgeToleranceSeconds) : -Double.infinity
        for entry in ledger {
            guard entry.endpoint == OptoLinkEndpoint.events.rawValue else {
                if entry.arrivedAt >= earliest { otherRows.append(entry) } else { ignored += 1 }
                continue
            }
            guard let raw = entry.properties?["opl_corr"], let corr = CorrelationId(raw), runIds.contains(corr.runId)
            else {
                ignored += 1
                continue
            }
            stored[raw, default: 0] += 1
            if learntDeviceIds[corr.device] == nil { learntDeviceIds[corr.device] = entry.deviceId }
        }
        var events = EndpointCounts()
        events.joinedBy = "correlation_id"
        var sent = Set<String>()
        for call in eventCalls {
            guard let corr = call.correlationId else { continue }
            sent.insert(corr)
            events.record(ok: call.outcome.isSuccess, stored: stored[corr] ?? 0)
        }
        events.unexpected = stored.filter { !sent.contains($0.key) }.reduce(0) { $0 + $1.value }
        let uncorrelated = eventCalls.filter { $0.correlationId == nil }.count
        endpoints[OptoLinkEndpoint.events.rawValue] = events

        // Session, identity, identity clear: per device by counts, the rest as one lump.
        let mappedIds = Set(learntDeviceIds.values)
        for endpoint in [OptoLinkEndpoint.session, .identity, .identityClear] {
            let endpointCalls = calls.filter { $0.endpoint == endpoint }
            let rows = otherRows.filter { $0.endpoint == endpoint.rawValue }
            var counts = EndpointCounts()
            var joins: [String] = []
            var perDevice: [String: (ok: Int, failed: Int)] = [:]
            var lump = (ok: 0, failed: 0)
            for call in endpointCalls {
                let ok = call.outcome.isSuccess
                if let id = learntDeviceIds[call.device] {
                    perDevice[id, default: (0, 0)].ok += ok ? 1 : 0
                    perDevice[id, default: (0, 0)].failed += ok ? 0 : 1
                } else {
                    lump.ok += ok ? 1 : 0
                    lump.failed += ok ? 0 : 1
                }
            }
            var storedPerDevice: [String: Int] = [:]
            var lumpStored = 0
            for row in rows {
                if mappedIds.contains(row.deviceId) { storedPerDevice[row.deviceId, default: 0] += 1 } else { lumpStored += 1 }
            }
            if !perDevice.isEmpty || !storedPerDevice.isEmpty {
                joins.append("device")
                for id in Set(perDevice.keys).union(storedPerDevice.keys) {
                    let client = perDevice[id] ?? (0, 0)
                    counts.recordCounts(ok: client.ok, failed: client.failed, stored: storedPerDevice[id] ?? 0)
                }
            }
            if lump.ok + lump.failed > 0 {
                joins.append("endpoint_total")
                counts.recordCounts(ok: lump.ok, failed: lump.failed, stored: lumpStored)
            } else {
                ignored += lumpStored
            }
            counts.joinedBy = joins.isEmpty ? "device" : joins.joined(separator: "+")
            endpoints[endpoint.rawValue] = counts
        }

        let note = uncorrelated > 0 ? "\(uncorrelated) event call(s) carried no correlation id and were not judged" : nil
        return ReconciliationVerdict(available: true, note: note, endpoints: endpoints, ignoredLedgerEntries: ignored)
    }

    public static let key = "reconciliation"

    public static var metricPatterns: [MetricPattern] {
        [
            MetricPattern(.oneOf(writeEndpoints.map(\.rawValue)), .oneOf(countNames)),
            MetricPattern("reconcile", .oneOf(totalNames)),
        ]
    }

    /// The endpoints that write to the server's ledger.
    static let writeEndpoints: [OptoLinkEndpoint] = OptoLinkEndpoint.allCases.filter { $0.retryClass != .repeatSafe }

    /// The per-endpoint counts, as metric suffixes.
    static let countNames = ReconcileOutcome.allCases.map(\.rawValue) + ["duplicate_writes", "unexpected"]
    /// The run-wide totals, as metric suffixes of `reconcile.`.
    static let totalNames = [ReconcileOutcome.duplicated.rawValue, ReconcileOutcome.lost.rawValue]

    public static func makePass(_ context: VerdictContext) -> Pass { Pass(context: context) }

    public var notExercised: [String: String] {
        guard available else { return [:] }
        var result: [String: String] = [:]
        for endpoint in Self.writeEndpoints where (endpoints[endpoint.rawValue]?.calls ?? 0) == 0 {
            for name in Self.countNames {
                result[endpoint.rawValue + "." + name] = "no \(endpoint.rawValue) write was made"
            }
        }
        if endpoints.values.allSatisfy({ $0.calls == 0 }) { result["reconcile"] = "no write was made" }
        return result
    }

    /// Collects the write calls, then joins them with the ledger.
    public struct Pass: VerdictPass {
        let context: VerdictContext
        var calls: [CallRecord] = []

        public mutating func consume(_ record: RunRecord) {
            guard case .call(let call) = record, ReconciliationVerdict.writeEndpoints.contains(call.endpoint) else {
                return
            }
            calls.append(call)
        }

        public mutating func finish() -> ReconciliationVerdict {
            ReconciliationVerdict.evaluate(
                calls: calls, ledger: context.ledger, deviceIds: context.deviceIds,
                runStartEpoch: context.runStartEpoch,
                edgeToleranceSeconds: context.configuration.edgeToleranceSeconds)
        }
    }

    public func addMetrics(to metrics: inout [String: Double]) {
        guard available else { return }
        var duplicated = 0
        var lost = 0
        for (name, counts) in endpoints {
            metrics["\(name).delivered_once"] = Double(counts.deliveredOnce)
            metrics["\(name).duplicated"] = Double(counts.duplicated)
            metrics["\(name).duplicate_writes"] = Double(counts.duplicateWrites)
            metrics["\(name).lost"] = Double(counts.lost)
            metrics["\(name).landed_unknown"] = Double(counts.landedUnknown)
            metrics["\(name).not_delivered"] = Double(counts.notDelivered)
            metrics["\(name).unexpected"] = Double(counts.unexpected)
            duplicated += counts.duplicated
            lost += counts.lost
        }
        metrics["reconcile.duplicated"] = Double(duplicated)
        metrics["reconcile.lost"] = Double(lost)
    }
}

extension ReconciliationVerdict.EndpointCounts {
    /// One call joined exactly (by correlation id).
    mutating func record(ok: Bool, stored: Int) {
        calls += 1
        switch stored {
        case 0 where ok: lost += 1
        case 0: notDelivered += 1
        case 1 where ok: deliveredOnce += 1
        case 1: landedUnknown += 1
        default:
            duplicated += 1
            duplicateWrites += stored - 1
        }
    }

    /// A group of calls joined by counts: successes are matched to rows first, then failures.
    mutating func recordCounts(ok: Int, failed: Int, stored: Int) {
        calls += ok + failed
        deliveredOnce += min(ok, stored)
        lost += max(0, ok - stored)
        let extra = max(0, stored - ok)
        let landed = min(extra, failed)
        landedUnknown += landed
        notDelivered += failed - landed
        duplicated += extra - landed
        duplicateWrites += extra - landed
    }
}

/// An event correlation id, `<runId>:<device>:<seq>` (the run id may itself contain colons).
struct CorrelationId: Equatable {
    var runId: String
    var device: String
    var sequence: String

    init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count >= 3 else { return nil }
        sequence = String(parts[parts.count - 1])
        device = String(parts[parts.count - 2])
        runId = parts[0..<(parts.count - 2)].joined(separator: ":")
    }
}
