import Foundation

/// One link the app should route to: a deferred match or a direct open (seed 001, "What
/// emits on `links`"; docs/CONTRACT.md §2).
public struct OptoLinkData: Sendable, Codable, Equatable {
    /// Where an emitted link came from (additive API).
    ///
    /// An app routes `.resolved`, `.deferred` and `.cached` links by `path`; a `.raw` link
    /// carries only what the URL itself holds (its path and query), so the app reads its own
    /// query parameters and otherwise opens its default screen. Only `.deferred` is an
    /// attribution result.
    public enum Source: String, Sendable, Codable, CaseIterable {
        /// `/data` answered for this open just now.
        case resolved
        /// `/data` failed for this open and the route cache held an earlier successful
        /// answer for the same host, path and query (``OptoLinkConfig/routeCache``). Never an
        /// attribution result.
        case cached
        /// Not resolved: a custom scheme, another org, or a Universal Link whose resolution
        /// failed with nothing cached. `linkId` is `nil`.
        case raw
        /// The first-launch (or manually re-run) deferred match: the attribution result.
        case deferred

        /// The source the other fields imply when none is given: `.deferred` when
        /// `isDeferred`, else `.raw` without a `linkId`, else `.resolved`.
        static func implied(linkId: String?, isDeferred: Bool) -> Source {
            isDeferred ? .deferred : (linkId == nil ? .raw : .resolved)
        }
    }

    /// The backend's link id; `nil` for raw direct links (custom scheme, other org, or a
    /// Universal Link whose resolution failed with no cached route).
    public let linkId: String?
    /// The app route, e.g. `/promo/summer`; for raw links the URL's path (possibly empty).
    public let path: String
    /// Flat string → string parameters; `nil` when absent.
    public let params: [String: String]?
    /// How the link was attributed (`.direct` for opens, cached ones included).
    public let matchMethod: MatchMethod
    /// Backend-reported confidence for deferred matches; `.exact` for direct opens.
    public let confidence: MatchConfidence
    /// `true` only for the first-launch (or manually re-run) deferred match.
    public let isDeferred: Bool
    /// The backend's `matchScore`; only `.fingerprintScored` carries it.
    public let score: Int?
    /// Whether this is a fresh resolution, a cached route, a raw link or a deferred match
    /// (additive API). Lets an app tell a route served from the cache during an outage from a
    /// fresh one.
    public let source: Source

    /// Memberwise initialiser (additive API, for tests and adapters).
    ///
    /// - Parameters:
    ///   - linkId: the backend's link id, or `nil` for a raw link.
    ///   - path: the app route, e.g. `/promo/summer`.
    ///   - params: flat string parameters, or `nil`.
    ///   - matchMethod: how the link was attributed.
    ///   - confidence: the backend's confidence.
    ///   - isDeferred: `true` for a first-launch deferred match.
    ///   - score: the fingerprint score (only with `.fingerprintScored`).
    ///   - source: `nil` (the default) derives it from the other fields: `.deferred`
    ///     when `isDeferred`, `.raw` when `linkId` is `nil`, else `.resolved`.
    public init(
        linkId: String?,
        path: String,
        params: [String: String]?,
        matchMethod: MatchMethod,
        confidence: MatchConfidence,
        isDeferred: Bool,
        score: Int? = nil,
        source: Source? = nil
    ) {
        self.linkId = linkId
        self.path = path
        self.params = params
        self.matchMethod = matchMethod
        self.confidence = confidence
        self.isDeferred = isDeferred
        self.score = score
        self.source = source ?? Source.implied(linkId: linkId, isDeferred: isDeferred)
    }

    enum CodingKeys: String, CodingKey {
        case linkId, path, params, matchMethod, confidence, isDeferred, score, source
    }

    /// Decodes the seed's shape; a missing `source` (JSON written before it existed) is derived
    /// from the other fields.
    /// - Throws: `DecodingError` when a seed field is missing or of the wrong type.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            linkId: try c.decodeIfPresent(String.self, forKey: .linkId),
            path: try c.decode(String.self, forKey: .path),
            params: try c.decodeIfPresent([String: String].self, forKey: .params),
            matchMethod: try c.decode(MatchMethod.self, forKey: .matchMethod),
            confidence: try c.decode(MatchConfidence.self, forKey: .confidence),
            isDeferred: try c.decode(Bool.self, forKey: .isDeferred),
            score: try c.decodeIfPresent(Int.self, forKey: .score),
            source: try c.decodeIfPresent(Source.self, forKey: .source))
    }
}
