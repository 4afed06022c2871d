import Foundation

/// The emulator's time source: wall-clock seconds since the Unix epoch.
///
/// Inject a manual source in tests so rate-limit windows, click windows and key rotation
/// grace run in virtual time.
public struct StagingClock: Sendable {
    /// Returns the current time in seconds since 1970-01-01T00:00:00Z.
    public var now: @Sendable () -> Double

    /// A clock reading `now`.
    public init(now: @escaping @Sendable () -> Double) { self.now = now }

    /// The system wall clock.
    public static let system = StagingClock { Date().timeIntervalSince1970 }
}
