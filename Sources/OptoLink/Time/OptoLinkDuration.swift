import Foundation

/// A length of time in nanoseconds: the SDK's own time unit, which exists on its iOS 15 floor
/// (Swift's `Duration` needs iOS 16 / macOS 13).
///
/// Back-off delays, `Retry-After` waits and per-attempt deadlines are ``OptoLinkDuration``s
/// (docs/CONTRACT.md §2, "Retry matrix"). Arithmetic saturates at ±`Int64.max` nanoseconds
/// (about 292 years) instead of trapping, so a 429 naming `Retry after 9223372036854775807 seconds`
/// cannot crash the SDK. Where `Duration` exists, `init(_:)` and ``duration`` convert.
public struct OptoLinkDuration: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The length in nanoseconds (negative for a length backwards in time).
    public var nanoseconds: Int64

    /// A length of `nanoseconds` nanoseconds.
    public init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// No time at all.
    public static let zero = OptoLinkDuration(nanoseconds: 0)

    /// `seconds` whole seconds, saturating past about 292 years.
    public static func seconds<T: BinaryInteger>(_ seconds: T) -> OptoLinkDuration {
        scaled(seconds, by: 1_000_000_000)
    }

    /// `seconds` seconds, to the nearest nanosecond; not finite or out of range saturates (NaN is zero).
    public static func seconds(_ seconds: Double) -> OptoLinkDuration {
        let nanoseconds = (seconds * 1e9).rounded()
        guard !nanoseconds.isNaN else { return .zero }
        guard nanoseconds < 9.2e18 else { return OptoLinkDuration(nanoseconds: .max) }
        guard nanoseconds > -9.2e18 else { return OptoLinkDuration(nanoseconds: .min) }
        return OptoLinkDuration(nanoseconds: Int64(nanoseconds))
    }

    /// `milliseconds` milliseconds, saturating past about 292 years.
    public static func milliseconds<T: BinaryInteger>(_ milliseconds: T) -> OptoLinkDuration {
        scaled(milliseconds, by: 1_000_000)
    }

    /// The length in seconds (what `TimeInterval` counts).
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    /// `"0.5 seconds"`: the length in seconds, as Swift's `Duration` prints it.
    public var description: String { "\(seconds) seconds" }

    /// Whether `lhs` is shorter than `rhs`.
    public static func < (lhs: OptoLinkDuration, rhs: OptoLinkDuration) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// The sum, saturating.
    public static func + (lhs: OptoLinkDuration, rhs: OptoLinkDuration) -> OptoLinkDuration {
        let (sum, overflow) = lhs.nanoseconds.addingReportingOverflow(rhs.nanoseconds)
        guard overflow else { return OptoLinkDuration(nanoseconds: sum) }
        return OptoLinkDuration(nanoseconds: rhs.nanoseconds > 0 ? .max : .min)
    }

    /// The difference, saturating.
    public static func - (lhs: OptoLinkDuration, rhs: OptoLinkDuration) -> OptoLinkDuration {
        let (difference, overflow) = lhs.nanoseconds.subtractingReportingOverflow(rhs.nanoseconds)
        guard overflow else { return OptoLinkDuration(nanoseconds: difference) }
        return OptoLinkDuration(nanoseconds: rhs.nanoseconds < 0 ? .max : .min)
    }

    private static func scaled<T: BinaryInteger>(_ value: T, by unit: Int64) -> OptoLinkDuration {
        guard let whole = Int64(exactly: value) else { return OptoLinkDuration(nanoseconds: value > 0 ? .max : .min) }
        let (product, overflow) = whole.multipliedReportingOverflow(by: unit)
        guard overflow else { return OptoLinkDuration(nanoseconds: product) }
        return OptoLinkDuration(nanoseconds: whole > 0 ? .max : .min)
    }
}
