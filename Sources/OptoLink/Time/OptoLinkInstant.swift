import Foundation

/// A point on an ``OptoLinkClock``'s monotonic timeline: nanoseconds since that clock's origin.
///
/// Instants of different clocks are not comparable; the SDK only compares instants of the
/// clock that produced them.
public struct OptoLinkInstant: Sendable, Hashable, Comparable {
    /// Nanoseconds since the clock's origin.
    public var nanoseconds: Int64

    /// The instant `nanoseconds` after the clock's origin.
    public init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// The instant `duration` later (earlier when negative), saturating.
    public func advanced(by duration: OptoLinkDuration) -> OptoLinkInstant {
        OptoLinkInstant(nanoseconds: (OptoLinkDuration(nanoseconds: nanoseconds) + duration).nanoseconds)
    }

    /// The time from this instant to `other` (negative when `other` is earlier).
    public func duration(to other: OptoLinkInstant) -> OptoLinkDuration {
        OptoLinkDuration(nanoseconds: other.nanoseconds) - OptoLinkDuration(nanoseconds: nanoseconds)
    }

    /// Whether `lhs` comes before `rhs` on the same clock.
    public static func < (lhs: OptoLinkInstant, rhs: OptoLinkInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }
}
