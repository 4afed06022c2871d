import Foundation
import OptoLink

/// A ``ManualClock`` is also the SDK's time source: its instants are its virtual offset, its
/// sleeps and per-attempt deadlines (the protocol's default timer) end when the test advances it.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
extension ManualClock: OptoLinkClock {
    /// The virtual time elapsed since the clock's start.
    public var instant: OptoLinkInstant { now.optoLinkInstant }

    /// Suspends until ``advance(by:)`` or ``advance(to:)`` reaches `deadline`.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled first.
    public func sleep(until deadline: OptoLinkInstant) async throws {
        try await sleep(until: VirtualInstant(deadline), tolerance: nil)
    }
}

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
extension VirtualInstant {
    /// The SDK's instant at the same offset.
    public var optoLinkInstant: OptoLinkInstant {
        OptoLinkInstant(nanoseconds: OptoLinkDuration(offset).nanoseconds)
    }

    /// The virtual instant at the SDK instant's offset.
    public init(_ instant: OptoLinkInstant) {
        self.init(offset: .nanoseconds(instant.nanoseconds))
    }
}
