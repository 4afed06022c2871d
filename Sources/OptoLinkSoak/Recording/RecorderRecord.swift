import Foundation
import OptoLinkStaging
import SoakRecords

/// One record the recorder publishes: every consumer (``RecordConsumers``) sees the same records
/// in the same order, the order they were recorded in.
enum RecorderRecord: Sendable {
    /// A finished attempt (a row of `attempts.csv`), with its response body when that body is off
    /// the contract (the aggregate keeps an excerpt of the first one).
    case attempt(AttemptRecord, offContractBody: Data?)
    /// A closed call (a row of `calls.csv`); it comes after every attempt of the call.
    case call(CallRecord)
    /// A journey started at run second `at`, `lag` seconds after its intended start.
    case journeyStarted(name: String, at: Double, lag: Double)
    /// A journey found every device busy and waited for one (open model).
    case journeyWaitedForDevice
    /// An arrival the open model planned at run second `intended` never started.
    case journeyDropped(intended: Double)
    /// A journey ended: `completed == false` when the run cut it short; `duration` from its intended start.
    case journeyEnded(name: String, completed: Bool, duration: Double)
    /// One browser click (status `nil` = no response).
    case click(status: Int?, latency: Double, clipboardPlaced: Bool)
    /// One `open` step.
    case open(OpenRecord)
    /// A first launch's deferred-match result.
    case attribution(AttributionRecord)
    /// One row of the server's ledger.
    case ledger(LedgerRow)
}

/// Something that takes the recorder's records, one at a time, under the recorder's lock.
protocol RecordConsumer {
    mutating func consume(_ record: RecorderRecord)
}
