import Foundation

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
extension OptoLinkDuration {
    /// The same length as `duration`, to the nanosecond, saturating past about 292 years.
    public init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .seconds(seconds) + OptoLinkDuration(nanoseconds: attoseconds / 1_000_000_000)
    }

    /// The same length as a Swift `Duration`.
    public var duration: Duration { .nanoseconds(nanoseconds) }
}
