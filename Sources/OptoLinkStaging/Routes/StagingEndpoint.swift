/// The routes of the emulator, named as the SDK names its endpoints where they overlap.
public enum StagingEndpoint: String, Sendable, Codable, CaseIterable {
    case match
    case data
    case session
    case identity
    case identityClear = "identity_clear"
    case events
    /// `GET /{orgKey}/{shortCode}`: a browser click.
    case click
    /// `GET /.well-known/apple-app-site-association`.
    case aasa
    /// `/__admin/*`.
    case admin
    /// Anything else (404).
    case unknown

    /// Whether an accepted request writes to the ledger.
    var isLedgerWrite: Bool {
        switch self {
        case .session, .identity, .identityClear, .events: true
        default: false
        }
    }
}
