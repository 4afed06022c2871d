import Foundation

/// How a link was attributed. Raw values are the wire values of `/match`'s `matchMethod`
/// (docs/CONTRACT.md §1); an unknown wire value decodes to ``none``, case-insensitively.
public enum MatchMethod: String, Sendable, Codable {
    /// The redirect page's click token was found on the clipboard.
    case clipboard = "CLIPBOARD"
    /// Android's Play referrer; kept for wire parity, never emitted on iOS (decision 1).
    case installReferrer = "INSTALL_REFERRER"
    /// The fingerprint hash matched a click exactly.
    case fingerprintExact = "FINGERPRINT_EXACT"
    /// The weighted fingerprint score passed the threshold; carries a score.
    case fingerprintScored = "FINGERPRINT_SCORED"
    /// Same client IP within the backend's window.
    case ipFuzzy = "IP_FUZZY"
    /// A direct open (Universal Link or custom scheme).
    case direct = "DIRECT"
    /// No match; also the decoding of any unknown wire value.
    case none = "NONE"

    /// Decodes a wire value case-insensitively; unknown values become ``none``.
    public init(wireValue: String) {
        self = MatchMethod(rawValue: wireValue.uppercased()) ?? .none
    }

    /// Decodes one JSON string with ``init(wireValue:)``.
    ///
    /// - Throws: `DecodingError.typeMismatch` when the value is not a string.
    public init(from decoder: any Decoder) throws {
        self.init(wireValue: try decoder.singleValueContainer().decode(String.self))
    }
}
