import Foundation

/// A point in virtual time: the offset from the clock's start. The instant of
/// ``ManualClock`` and ``RecordingClock``.
@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
public struct VirtualInstant: InstantProtocol, Sendable, Hashable, Comparable {
    /// Time since the clock was created.
    public var offset: Duration

    public init(offset: Duration = .zero) { self.offset = offset }

    public func advanced(by duration: Duration) -> VirtualInstant {
        VirtualInstant(offset: offset + duration)
    }

    public func duration(to other: VirtualInstant) -> Duration {
        other.offset - offset
    }

    public static func < (lhs: VirtualInstant, rhs: VirtualInstant) -> Bool {
        lhs.offset < rhs.offset
    }
}
