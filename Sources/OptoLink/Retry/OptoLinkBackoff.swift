import Foundation

/// The back-off between attempts for every retryable failure except a 429
/// (docs/CONTRACT.md §2, "Retry matrix"): `min(0.5 · 2ⁿ, 5)` seconds, `n` = 0 for the first retry.
///
/// | n | 0 | 1 | 2 | 3 | ≥ 4 |
/// |---|---|---|---|---|---|
/// | delay (s) | 0.5 | 1 | 2 | 4 | 5 |
public enum OptoLinkBackoff {
    /// The cap in seconds.
    public static let maximum: OptoLinkDuration = .seconds(5)

    /// The longest wait before a retry, in seconds: one year, the same cap as the per-attempt
    /// timeout's. A longer one, such as a 429 naming `Retry after 9223372036854775807 seconds` or a
    /// custom policy's `.seconds(Int64.max)`, is cut to this: a clock cannot add it to its `now`
    /// without overflowing. In practice such a call waits until it is cancelled or its instance
    /// is disposed.
    public static let longestWait: OptoLinkDuration = .seconds(31_536_000)

    /// The delay before retry number `retryIndex + 1`; negative indices count as 0.
    public static func delay(retryIndex: Int) -> OptoLinkDuration {
        let n = max(0, retryIndex)
        guard n < 4 else { return maximum }
        return min(.milliseconds(500 * (1 << n)), maximum)
    }
}
