import Foundation

/// One link the app should route to: a deferred match or a direct open (seed 001, "What
/// emits on `links`"; docs/CONTRACT.md §2).
public struct OptoLinkData: Sendable, Codable, Equatable {
    /// The backend's link id; `nil` for raw direct links (custom scheme, other org, or a
    /// Universal Link whose resolution failed).
    public let linkId: String?
    /// The app route, e.g. `/promo/summer`; for raw links the URL's path (possibly empty).
    public let path: String
    /// Flat string → string parameters; `nil` when absent.
    public let params: [String: String]?
    /// How the link was attributed (`.direct` for opens).
    public let matchMethod: MatchMethod
    /// Backend-reported confidence for deferred matches; `.exact` for direct opens.
    public let confidence: MatchConfidence
    /// `true` only for the first-launch (or manually re-run) deferred match.
    public let isDeferred: Bool
    /// The backend's `matchScore`; only `.fingerprintScored` carries it.
    public let score: Int?

    /// Memberwise initialiser (additive API, for tests and adapters).
    public init(
        linkId: String?,
        path: String,
        params: [String: String]?,
        matchMethod: MatchMethod,
        confidence: MatchConfidence,
        isDeferred: Bool,
        score: Int? = nil
    ) {
        self.linkId = linkId
        self.path = path
        self.params = params
        self.matchMethod = matchMethod
        self.confidence = confidence
        self.isDeferred = isDeferred
        self.score = score
    }
}
