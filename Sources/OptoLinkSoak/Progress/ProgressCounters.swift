/// The recorder's part of the progress line at one moment.
package struct ProgressCounters: Sendable, Equatable {
    package var requests: Int
    package var status429: Int
    package var errors: Int
    /// Journeys ended.
    package var done: Int
    /// p99 attempt latency so far, seconds.
    package var p99: Double
    /// Calls sleeping out a 429's Retry-After at that moment.
    package var waitingOnRetryAfter: Int
}
