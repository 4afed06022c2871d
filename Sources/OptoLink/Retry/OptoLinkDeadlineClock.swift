import Foundation

/// A clock that runs the SDK's per-attempt deadline itself instead of an ordinary sleep.
///
/// The SDK races every attempt against `clock.sleep(for: timeout)` (docs/CONTRACT.md §2,
/// per-attempt timeout). A test clock whose sleeps return at once (recording back-off
/// delays) would make every attempt time out; such a clock adopts this protocol and
/// decides what a deadline does (e.g. never fire until cancelled). Ordinary clocks
/// (`ContinuousClock`, a manual clock) need not adopt it.
public protocol OptoLinkDeadlineClock: Sendable {
    /// Returns when the per-attempt deadline `timeout` has passed; throws when cancelled
    /// (the attempt finished first).
    func sleepUntilDeadline(_ timeout: Duration) async throws
}
