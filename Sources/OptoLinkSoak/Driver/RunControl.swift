import Synchronization
import SoakRecords

/// The run's stop switch and its deadlines, in run seconds on the run's one clock.
///
/// - The **step window** ends at `load.duration` (or earlier, when the run is stopped): no
///   journey and no step starts at or after it. Without a `duration` (an open model bounded
///   by its stages) it never closes by itself: journeys started in the schedule run their steps.
/// - The **cutoff** is the run's end (`duration`, else the stages' total, or the stop if
///   earlier) plus `grace`: no call and no HTTP attempt starts at or after it, and whatever
///   is still running then is cancelled.
///
/// A stop (SIGINT, SIGTERM, an early abort) closes the window at once, so in-flight
/// work gets at most `grace` seconds from the stop. The first reason wins. A second signal
/// ends the grace period at once (``endGraceNow()``): in-flight work is cut as at the cutoff.
package final class RunControl: Sendable {
    private struct State {
        var reason: StopReason?
        var timeline: RunTimeline?
        var window = Double.infinity
        var end = Double.infinity
        var grace = 0.0
        var stoppedAt: Double?
        var cut = false
        var graceEnded = false
    }

    private let state = Mutex(State())

    package init() {}

    /// Sets the run's clock and deadlines (the driver calls it when the run starts).
    /// - Parameters:
    ///   - window: seconds after which no step starts (`.infinity`: only the stop closes it).
    ///   - end: seconds after which no journey starts; the cutoff is `end + grace`
    ///     (`.infinity` when only `iterations` bounds the run). At least `window`.
    ///   - grace: seconds in-flight work may take after `end` (or the stop).
    package func arm(timeline: RunTimeline, window: Double, end: Double, grace: Double) {
        state.withLock { s in
            s.timeline = timeline
            s.window = window
            s.end = Swift.min(end, window)
            s.grace = s.graceEnded ? 0 : Swift.max(0, grace)
            if s.reason != nil, s.stoppedAt == nil { s.stoppedAt = timeline.now() }
        }
    }

    /// Stops the run for `why` (`interrupted`, `terminated`, `misconfigured`, …); later calls keep
    /// the first reason. Closes the step window now; the cutoff becomes now + grace at the latest.
    package func stop(_ why: StopReason) {
        state.withLock { s in
            guard s.reason == nil else { return }
            s.reason = why
            s.stoppedAt = s.timeline?.now()
        }
    }

    /// Ends the grace period now (a second stop signal): the cutoff becomes the stop, or the run's
    /// end if that came first, so the driver's watchdog cancels in-flight work within 0.25 s and the
    /// report is written with what was measured. Stops the run as `why` if it was not stopped yet.
    package func endGraceNow(_ why: StopReason) {
        stop(why)
        state.withLock { s in
            s.graceEnded = true
            s.grace = 0
        }
    }

    /// Whether ``endGraceNow(_:)`` was called.
    package var graceEnded: Bool { state.withLock { $0.graceEnded } }

    /// Whether ``stop(_:)`` was called.
    package var isStopped: Bool { state.withLock { $0.reason != nil } }
    /// The first reason given to ``stop(_:)``, if any.
    package var stopReason: StopReason? { state.withLock { $0.reason } }

    /// Run seconds at which the step window closes: `duration`, or the stop time if earlier.
    package var windowEnd: Double {
        state.withLock { s in Swift.min(s.window, s.stoppedAt ?? .infinity) }
    }

    /// Run seconds at which every call and attempt is cut: the run's end (or the stop) + grace.
    package var cutoff: Double {
        state.withLock { s in Swift.min(s.end, s.stoppedAt ?? .infinity) + s.grace }
    }

    /// Seconds from now (on the run's clock) until ``cutoff``, at least 0; `nil` before ``arm(timeline:window:end:grace:)``.
    package var secondsUntilCutoff: Double? {
        state.withLock { s in
            guard let timeline = s.timeline else { return nil }
            let cutoff = Swift.min(s.end, s.stoppedAt ?? .infinity) + s.grace
            return cutoff.isFinite ? Swift.max(0, cutoff - timeline.now()) : nil
        }
    }

    /// Whether a step may start at run time `t` (the run is not stopped and the window is open).
    package func stepAllowed(at t: Double) -> Bool {
        state.withLock { s in s.reason == nil && t < s.window }
    }

    /// Whether a call or attempt may start at run time `t` (before the cutoff, and not cut).
    package func attemptAllowed(at t: Double) -> Bool {
        state.withLock { s in !s.cut && t < Swift.min(s.end, s.stoppedAt ?? .infinity) + s.grace }
    }

    /// Marks the cutoff as reached: from now on nothing starts, whatever the clock says.
    package func markCut() {
        state.withLock { $0.cut = true }
    }

    /// Whether the cutoff was reached with work still running (it was cancelled).
    package var wasCut: Bool { state.withLock { $0.cut } }
}
