import Foundation

/// The backend's confidence in a match. The wire sends it lowercase (`"high"`); decoding
/// is case-insensitive and an unknown value becomes ``medium`` (docs/CONTRACT.md §1).
public enum MatchConfidence: String, Sendable, Codable {
    case exact = "EXACT"
    case high = "HIGH"
    case medium = "MEDIUM"
    case low = "LOW"

    /// Decodes a wire value case-insensitively; unknown values become ``medium``.
    public init(wireValue: String) {
        self = MatchConfidence(rawValue: wireValue.uppercased()) ?? .medium
    }

    public init(from decoder: any Decoder) throws {
        self.init(wireValue: try decoder.singleValueContainer().decode(String.self))
    }
}
