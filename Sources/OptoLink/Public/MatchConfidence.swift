import Foundation

/// The backend's confidence in a match. The wire sends it lowercase (`"high"`); decoding
/// is case-insensitive and an unknown value becomes ``medium`` (docs/CONTRACT.md §1).
public enum MatchConfidence: String, Sendable, Codable {
    /// The click was identified for certain (a clipboard token, or an exact fingerprint).
    case exact = "EXACT"
    /// A strong fingerprint or IP match.
    case high = "HIGH"
    /// A plausible match; also the decoding of any unknown wire value.
    case medium = "MEDIUM"
    /// A weak match the app may want to confirm.
    case low = "LOW"

    /// Decodes a wire value case-insensitively; unknown values become ``medium``.
    public init(wireValue: String) {
        self = MatchConfidence(rawValue: wireValue.uppercased()) ?? .medium
    }

    /// Decodes one JSON string with ``init(wireValue:)``.
    ///
    /// - Throws: `DecodingError.typeMismatch` when the value is not a string.
    public init(from decoder: any Decoder) throws {
        self.init(wireValue: try decoder.singleValueContainer().decode(String.self))
    }
}
