import Foundation
import OptoLinkHTTP

/// The run's time axis: seconds since the run started, read from the run's one injected
/// clock (the same clock the driver and every SDK instance sleep on), plus the wall-clock
/// epoch of that start (to join with the server ledger's epoch times).
///
/// A real run uses `ContinuousClock`; a test passes a virtual clock, and then every time in
/// the report (attempts, calls, journeys, the timeline) is virtual time.
package struct RunTimeline: Sendable {
    /// Seconds elapsed on the clock since the origin, rounded to the microsecond.
    private let elapsed: @Sendable () -> Double
    /// Unix epoch seconds at the origin.
    package let originEpoch: Double

    /// A timeline starting now on `ContinuousClock`.
    package init() {
        self.init(clock: ContinuousClock())
    }

    /// A timeline starting now on `clock`; `originEpoch` is the wall-clock time now (or `epoch`).
    package init(clock: any Clock<Duration>, epoch: Double? = nil) {
        elapsed = Self.stopwatch(clock, offset: .zero)
        originEpoch = epoch ?? Date().timeIntervalSince1970
    }

    /// A timeline whose origin was `alreadyElapsed` seconds before now (a shard that starts
    /// after the shared `--start-at` instant `epoch`): ``now()`` starts at `alreadyElapsed`.
    package init(clock: any Clock<Duration>, epoch: Double, alreadyElapsed: Double) {
        elapsed = Self.stopwatch(clock, offset: RunTimeline.wait(Swift.max(0, alreadyElapsed)))
        originEpoch = epoch
    }

    /// Reads `clock` now and returns, on each call, the seconds elapsed since then plus `offset`,
    /// rounded to the microsecond.
    private static func stopwatch<C: Clock>(_ clock: C, offset: Duration) -> @Sendable () -> Double
    where C.Duration == Duration {
        // The real clock of every run (read a few times per request): its kernel clock read
        // directly, in integer nanoseconds, without `Duration`'s 128-bit arithmetic.
        if clock is ContinuousClock, let offsetNanos = wholeNanoseconds(offset) {
            let origin = ContinuousNanoseconds.now()
            return { microseconds(nanoseconds: ContinuousNanoseconds.now() - origin + offsetNanos) }
        }
        let origin = clock.now
        return { microseconds(origin.duration(to: clock.now) + offset) }
    }

    /// Seconds since the run started, rounded to the microsecond: the resolution every report
    /// time is written with, so each one is written by integer arithmetic (``CSV/appendExactSeconds(_:to:)``)
    /// and reads back as the very value the live verdicts judged.
    package func now() -> Double {
        elapsed()
    }

    /// `nanoseconds` in seconds, rounded to the nearest microsecond (half away from zero), as
    /// ``microseconds(_:)`` rounds the same `Duration`.
    package static func microseconds(nanoseconds: Int64) -> Double {
        let half: Int64 = nanoseconds >= 0 ? 500 : -500
        return Double((nanoseconds + half) / 1000) / 1e6
    }

    /// `duration` in whole nanoseconds, or `nil` when it has a fraction of one or does not fit.
    package static func wholeNanoseconds(_ duration: Duration) -> Int64? {
        let d = duration.components
        let nanosPerSecond: Int64 = 1_000_000_000
        guard d.attoseconds % 1_000_000_000 == 0, abs(d.seconds) < Int64.max / nanosPerSecond / 2 else { return nil }
        return d.seconds * nanosPerSecond + d.attoseconds / 1_000_000_000
    }

    /// `duration` in seconds, rounded to the nearest microsecond (half away from zero).
    package static func microseconds(_ duration: Duration) -> Double {
        let d = duration.components
        let attosPerMicro: Int64 = 1_000_000_000_000
        let half = d.attoseconds >= 0 ? attosPerMicro / 2 : -attosPerMicro / 2
        return Double(d.seconds * 1_000_000 + (d.attoseconds + half) / attosPerMicro) / 1e6
    }

    /// A wait of `seconds`, rounded up to a whole nanosecond and at least 1 ns, so a loop that
    /// sleeps until a deadline a fraction of a nanosecond away still makes progress (a zero
    /// sleep on a virtual clock would return at once, forever).
    package static func wait(_ seconds: Double) -> Duration {
        .nanoseconds(waitNanoseconds(seconds))
    }

    /// ``wait(_:)`` in whole nanoseconds: at least 1, and a day for a wait that is not finite.
    package static func waitNanoseconds(_ seconds: Double) -> Int64 {
        guard seconds.isFinite else { return 86_400_000_000_000 }
        return Swift.max(1, Int64((Swift.min(seconds, 1e9) * 1e9).rounded(.up)))
    }

    /// `duration` in seconds.
    package static func seconds(_ duration: Duration) -> Double {
        let d = duration.components
        return Double(d.seconds) + Double(d.attoseconds) / 1e18
    }
}
