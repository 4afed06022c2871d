import Foundation

@available(iOS 16, macOS 13, tvOS 16, watchOS 9, *)
extension Clock where Instant == VirtualInstant, Self: Sendable {
    /// A wall clock that moves with this virtual clock: `epoch` plus the time this clock has
    /// advanced (for `OptoLinkEnvironment.wallClock`, e.g. to age route-cache entries by
    /// advancing a ``ManualClock`` 31 days).
    ///
    /// - Parameter epoch: the wall-clock time at this clock's start (default 2026-09-20T00:00:00Z).
    public func wallClock(startingAt epoch: Date = Date(timeIntervalSince1970: 1_789_862_400)) -> @Sendable () -> Date {
        { [self] in
            let offset = now.offset.components
            return epoch.addingTimeInterval(Double(offset.seconds) + Double(offset.attoseconds) * 1e-18)
        }
    }
}
