import Foundation

/// Any Swift `Clock<Duration>` as an ``OptoLinkClock`` (iOS 16 / macOS 13 and later), e.g. a
/// `ContinuousClock` a tool already measures its runs on, or a test's virtual clock.
///
/// Instants count from the wrapped clock's `now` when this wrapper was made. The per-attempt
/// deadline is the protocol's default timer (a task that sleeps on the wrapped clock).
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
public struct OptoLinkSwiftClock<Base: Clock>: OptoLinkClock where Base.Duration == Duration, Base: Sendable {
    /// The wrapped clock.
    public let base: Base
    private let origin: Base.Instant

    /// Wraps `base`; its current `now` becomes instant zero.
    public init(_ base: Base) {
        self.base = base
        origin = base.now
    }

    /// The time the wrapped clock has advanced since this wrapper was made.
    public var instant: OptoLinkInstant {
        OptoLinkInstant(nanoseconds: OptoLinkDuration(origin.duration(to: base.now)).nanoseconds)
    }

    /// Sleeps on the wrapped clock until `deadline`.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled first.
    public func sleep(until deadline: OptoLinkInstant) async throws {
        try await base.sleep(until: origin.advanced(by: .nanoseconds(deadline.nanoseconds)), tolerance: nil)
    }
}
