import Foundation
import Synchronization
import SoakRecords

/// Counts the stop signals (SIGINT, SIGTERM) a run received and words the message for each:
/// the first stops new work and says how long in-flight calls may still take, read from the run's
/// actual cutoff (``RunControl/cutoff``: the run's end or the stop, whichever came first, plus
/// `load.grace`), not from the signal; the second ends them now (``RunControl/endGraceNow(_:)``);
/// a later one only says so again.
package final class StopRequests: Sendable {
    private struct State {
        var count = 0
        var grace: Double?
    }

    private let state = Mutex(State())

    package init() {}

    /// Records the grace period (seconds) once the profile is known; it words a signal that
    /// arrives before the run's clock starts (the cutoff is then the grace period from the start).
    package func setGrace(_ seconds: Double) {
        state.withLock { $0.grace = seconds }
    }

    /// Signals received so far.
    package var count: Int { state.withLock { $0.count } }

    /// Records one signal named `name` (`SIGINT`, `SIGTERM`) that stops `control` for `reason`
    /// (the first signal) or ends its grace period now (any later one), and returns the line to
    /// print, with the seconds left until `control`'s cutoff on its clock.
    package func record(_ name: String, stopping control: RunControl, for reason: StopReason) -> String {
        let repeated = state.withLock { $0.count > 0 }
        if repeated { control.endGraceNow(reason) } else { control.stop(reason) }
        return record(name, control: control)
    }

    /// Records one signal named `name` after `control` was stopped (or its grace ended), and
    /// returns the line to print, with the seconds left until `control`'s cutoff on its clock.
    package func record(_ name: String, control: RunControl) -> String {
        record(name, secondsLeft: control.secondsUntilCutoff)
    }

    /// Records one signal named `name`; `secondsLeft` is the time until the run's cutoff
    /// (`nil` while the run's clock has not started).
    package func record(_ name: String, secondsLeft: Double?) -> String {
        state.withLock { s in
            s.count += 1
            let within: String
            if let secondsLeft {
                within = Self.seconds(secondsLeft)
            } else if let grace = s.grace {
                within = "\(Self.seconds(grace)) (load.grace)"
            } else {
                within = "the grace period (load.grace)"
            }
            switch s.count {
            case 1:
                return "\(name): stopping new work; in-flight calls end within \(within), then the report is written "
                    + "(\(name) again: end them now)…"
            case 2:
                return "\(name) again: ending in-flight calls now; the report is written with what was measured"
            default:
                return "\(name) again: already ending in-flight calls; the report is being written"
            }
        }
    }

    /// `3 s`, `0.8 s`: whole seconds as such, anything else rounded up to a tenth (never promise
    /// less time than is left).
    private static func seconds(_ value: Double) -> String {
        let tenths = (Swift.max(0, value) * 10 - 1e-9).rounded(.up) / 10
        return tenths == tenths.rounded() ? "\(Int(tenths)) s" : String(format: "%.1f s", tenths)
    }
}
