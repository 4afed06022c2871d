import OptoLink
import OptoLinkStaging
import Testing

@testable import OptoLinkSoak
@testable import SoakRecords

/// Synthetic records for the verdict unit tests.
enum Fixture {
    static func attempt(
        _ endpoint: OptoLinkEndpoint = .events, device: String = "d000001", launch: Int = 1, call: UInt64 = 1,
        attempt: Int = 1, start: Double, end: Double? = nil, status: Int? = 200, error: AttemptErrorKind? = nil,
        retryAfter: Int? = nil, corr: String? = nil, ip: String? = nil
    ) -> AttemptRecord {
        AttemptRecord(
            device: device, launch: launch, callId: call, endpoint: endpoint, attempt: attempt, intendedStart: start,
            actualStart: start, end: end ?? start + 0.01, status: status,
            errorKind: status == nil ? (error ?? .timedOut) : nil,
            retryAfterSeconds: retryAfter, requestBytes: 100, responseBytes: 50, correlationId: corr, clientIP: ip)
    }

    /// One step of a call: the attempt's status (nil = no response) and the gap before the next.
    struct Step {
        var status: Int?
        var retryAfter: Int? = nil
        var gapAfter: Double = 0
        var duration: Double = 0.01
    }

    /// The attempts of one call starting at `start`, each next attempt `gapAfter` after the previous end.
    static func call(
        _ endpoint: OptoLinkEndpoint, device: String = "d000001", call: UInt64 = 1, start: Double = 1,
        _ steps: [Step]
    ) -> [AttemptRecord] {
        var time = start
        var records: [AttemptRecord] = []
        for (index, step) in steps.enumerated() {
            records.append(
                attempt(
                    endpoint, device: device, call: call, attempt: index + 1, start: time, end: time + step.duration,
                    status: step.status, retryAfter: step.retryAfter))
            time += step.duration + step.gapAfter
        }
        return records
    }

    static func callRecord(
        _ endpoint: OptoLinkEndpoint, device: String = "d000001", call: UInt64 = 1, attempts: Int = 1,
        outcome: CallOutcome = .ok, corr: String? = nil
    ) -> CallRecord {
        CallRecord(
            device: device, launch: 1, callId: call, endpoint: endpoint, attempts: attempts, intendedStart: 0, start: 0,
            end: 0.01, outcome: outcome, finalStatus: outcome == .ok ? 200 : 500, correlationId: corr)
    }

    static func ledger(_ endpoint: String, deviceId: String, corr: String? = nil, at: Double = 1_000)
        -> StagingLedgerEntry
    {
        StagingLedgerEntry(
            sequence: 0, arrivedAt: at, endpoint: endpoint, deviceId: deviceId, apiKeySuffix: "client",
            eventName: endpoint == "events" ? "purchase" : nil, properties: corr.map { ["opl_corr": $0] })
    }
}
