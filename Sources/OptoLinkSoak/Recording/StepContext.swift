import Foundation
import Synchronization

/// What the journey runner tells the recorder about the step being executed, carried to the
/// recording middleware as a task-local value (it follows the SDK's call into its child tasks).
///
/// The first call the step makes claims `intendedStart` (the step's scheduled time, open
/// model), so latency measured from it includes any lateness of the driver; later calls of
/// the same step are measured from their actual start. Every call id the step makes is
/// collected so the runner can close those calls when the public call returns.
package final class StepContext: Sendable {
    @TaskLocal package static var current: StepContext?

    private struct State {
        var intendedStart: Double?
        var callIds: [UInt64] = []
    }

    private let state: Mutex<State>

    package init(intendedStart: Double?) {
        self.state = Mutex(State(intendedStart: intendedStart))
    }

    /// Registers `callId` and returns the step's intended start if this is the step's first call.
    func claim(callId: UInt64) -> Double? {
        state.withLock { s in
            guard !s.callIds.contains(callId) else { return nil }
            s.callIds.append(callId)
            defer { s.intendedStart = nil }
            return s.intendedStart
        }
    }

    /// The call ids this step made so far.
    package var callIds: [UInt64] { state.withLock { $0.callIds } }
}
