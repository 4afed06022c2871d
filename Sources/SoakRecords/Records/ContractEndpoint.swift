/// The contract's endpoints (docs/CONTRACT.md §1), as the run's records name them.
///
/// The raw values are the names the records carry in `attempts.csv`, `calls.csv`, `summary.json`
/// and the ledger's `endpoint`; the runner maps the SDK's endpoint to this one where it records
/// an attempt, so the records and the verdicts over them do not depend on the SDK they judge.
package enum ContractEndpoint: String, Sendable, CaseIterable, Codable {
    /// `POST /match`: the first-launch deferred match.
    case match
    /// `GET /{orgKey}/{shortCode}/data`: Universal Link resolution.
    case data
    /// `POST /sdk/session`: the fire-and-forget check-in.
    case session
    /// `POST /sdk/identity`.
    case identity
    /// `POST /sdk/identity/clear`.
    case identityClear = "identity_clear"
    /// `POST /sdk/events`.
    case events

    /// Whether a request to it is a write the server's ledger records (every `/sdk/*` endpoint).
    package var writesLedger: Bool {
        switch self {
        case .match, .data: false
        case .session, .identity, .identityClear, .events: true
        }
    }
}
