/// One answered hit on a bucket key as the family fit sees it: it reached the server somewhere
/// in `earliest…latest` (seconds since the Unix epoch) and passed (`admitted`) or got a 429
/// with `retryAfterSeconds` (`nil`: no parseable `N`), or is ``uncertain``.
package struct LimiterObservation: Sendable, Equatable {
    package var key: String
    package var earliest: Double
    package var latest: Double
    package var admitted: Bool
    package var retryAfterSeconds: Int?
    /// No response or a 5xx: the limiter may or may not have counted the hit. It is never judged;
    /// it only excuses a 429 (replayed as a pass where that leaves less room).
    package var uncertain = false
    /// Where the hit came from, for the report's examples.
    package var device = ""
    package var callId: UInt64 = 0
    package var attempt = 0
    /// The attempt's start, seconds since the run's start.
    package var runSeconds = 0.0

    package init(key: String, earliest: Double, latest: Double, admitted: Bool, retryAfterSeconds: Int? = nil) {
        self.key = key
        self.earliest = earliest
        self.latest = max(earliest, latest)
        self.admitted = admitted
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// The middle of the arrival interval: the order hits are replayed in.
    package var middle: Double { (earliest + latest) / 2 }
}
