import Foundation
import Synchronization

/// Counts the stop signals (SIGINT, SIGTERM) a run received and words the message for each:
/// the first stops new work, a later one only says the run is already stopping and how long
/// in-flight calls may still take (the profile's `load.grace`).
package final class StopRequests: Sendable {
    private struct State {
        var count = 0
        var grace: Double?
        var firstAt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    package init() {}

    /// Records the grace period (seconds) once the profile is known.
    package func setGrace(_ seconds: Double) {
        state.withLock { $0.grace = seconds }
    }

    /// Signals received so far.
    package var count: Int { state.withLock { $0.count } }

    /// Records one signal named `name` (`SIGINT`, `SIGTERM`) and returns the line to print.
    package func record(_ name: String, now: ContinuousClock.Instant = .now) -> String {
        state.withLock { s in
            s.count += 1
            if s.count == 1 {
                s.firstAt = now
                let grace = s.grace.map { "up to \(Self.seconds($0)) (load.grace)" } ?? "the grace period (load.grace)"
                return "\(name): stopping new work; in-flight journeys get \(grace), then the report is written…"
            }
            guard let grace = s.grace, let first = s.firstAt else {
                return
                    "\(name) again: already stopping; in-flight calls end within the grace period, then the report is written"
            }
            let elapsed =
                Double((now - first).components.seconds)
                + Double((now - first).components.attoseconds) / 1e18
            return
                "\(name) again: already stopping; in-flight calls end within \(Self.seconds(Swift.max(0, grace - elapsed))), then the report is written"
        }
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : String(format: "%.1f s", value)
    }
}
