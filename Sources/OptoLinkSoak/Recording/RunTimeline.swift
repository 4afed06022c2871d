import Foundation

/// The run's time axis: seconds since the run started on the monotonic clock, plus the
/// wall-clock epoch of that start (to join with the server ledger's epoch times).
public struct RunTimeline: Sendable {
    public let origin: ContinuousClock.Instant
    /// Unix epoch seconds at `origin`.
    public let originEpoch: Double

    public init() {
        origin = ContinuousClock.now
        originEpoch = Date().timeIntervalSince1970
    }

    /// Seconds since the run started.
    public func now() -> Double {
        seconds(at: ContinuousClock.now)
    }

    /// Seconds since the run started at `instant`.
    public func seconds(at instant: ContinuousClock.Instant) -> Double {
        let d = (instant - origin).components
        return Double(d.seconds) + Double(d.attoseconds) / 1e18
    }

    /// The instant `seconds` after the run started.
    public func instant(at seconds: Double) -> ContinuousClock.Instant {
        origin.advanced(by: .nanoseconds(Int64((seconds * 1e9).rounded())))
    }
}
