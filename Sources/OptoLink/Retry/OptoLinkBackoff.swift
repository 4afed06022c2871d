import Foundation

/// The back-off between attempts for every retryable failure except a 429
/// (docs/CONTRACT.md §2, "Retry matrix"): `min(0.5 · 2ⁿ, 5)` seconds, `n` = 0 for the first retry.
///
/// | n | 0 | 1 | 2 | 3 | ≥ 4 |
/// |---|---|---|---|---|---|
/// | delay (s) | 0.5 | 1 | 2 | 4 | 5 |
public enum OptoLinkBackoff {
    /// The cap in seconds.
    public static let maximum: Duration = .seconds(5)

    /// The delay before retry number `retryIndex + 1`; negative indices count as 0.
    public static func delay(retryIndex: Int) -> Duration {
        let n = max(0, retryIndex)
        guard n < 4 else { return maximum }
        return min(.milliseconds(500 * (1 << n)), maximum)
    }
}
