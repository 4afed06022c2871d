import Foundation
import SoakRecords

/// One thing a recording thread tells the recorder; the recorder applies these in the order they
/// were recorded (``SoakRecorder/submit(_:)``), turning them into the records it publishes.
enum RecorderEvent: Sendable {
    /// An attempt began: its call's key, where it goes, and its intended and actual start (run seconds).
    case began(key: CallKey, endpoint: ContractEndpoint, intendedStart: Double, start: Double)
    /// An attempt ended, with its row (and the bodies its last fields are read from).
    case ended(record: AttemptRecord, bodies: AttemptBodies?)
    /// Calls were closed at run second `now` (``SoakRecorder/closeCalls(_:callIds:outcome:)``).
    case closed(launch: DeviceLaunch, callIds: [UInt64]?, outcome: CallOutcome?, now: Double)
    /// A launch's SDK `deviceId` (rows of its calls carry it).
    case deviceId(device: String, launch: Int?, deviceId: String)
    /// A record that needs no assembly (a journey, a click, an open, a ledger row, a deferred
    /// match), kept in order with the attempts.
    case record(RecorderRecord)
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
