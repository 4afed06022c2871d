import SoakSupport
/// The emulator's fixture data: organisations, their API keys, iOS app configs and links.
///
/// Loadable from JSON (the `fixtures` object of a ``StagingConfiguration`` file); ``default``
/// is the built-in set `optolink-soak serve` uses with no arguments.
public struct StagingFixtures: Sendable, Codable, Equatable {
    /// Every organisation the emulator knows.
    public var orgs: [StagingOrg]

    /// Fixtures made of `orgs`.
    public init(orgs: [StagingOrg]) { self.orgs = orgs }

    enum CodingKeys: String, CodingKey, CaseIterable { case orgs }

    public init(from decoder: any Decoder) throws {
        orgs = try decoder.strictContainer(keyedBy: CodingKeys.self).decode([StagingOrg].self, forKey: .orgs)
    }

    /// The built-in fixtures: orgs `acme` and `globex` with their keys and links.
    public static let `default` = StagingFixtures(orgs: [
        StagingOrg(
            orgKey: "acme",
            apiKeys: [
                StagingAPIKey(key: "opl_sdk_test_acme_client", tier: .client),
                StagingAPIKey(key: "opl_srv_test_acme_server", tier: .server),
                StagingAPIKey(key: "opl_sdk_test_acme_revoked", tier: .client, revoked: true),
                StagingAPIKey(key: "opl_sdk_test_acme_rotated", tier: .client, rotatedAgoSeconds: 3600),
            ],
            ios: StagingIOSApp(teamId: "TEAM123456", bundleId: "com.example.acme", customHosts: ["links.acme.test"]),
            links: [
                StagingLink(
                    shortCode: "welcome", linkId: "lnk_welcome", path: "/welcome", params: ["campaign": "spring"]),
                StagingLink(
                    shortCode: "promo", linkId: "lnk_promo", path: "/promo/summer",
                    params: ["code": "SUMMER", "ref": "mail"]),
                StagingLink(shortCode: "expired", linkId: "lnk_expired", path: "/expired", active: false),
            ]),
        StagingOrg(
            orgKey: "globex",
            apiKeys: [StagingAPIKey(key: "opl_sdk_test_globex_client", tier: .client)],
            ios: StagingIOSApp(teamId: nil, bundleId: "com.example.globex"),
            links: [StagingLink(shortCode: "hello", linkId: "lnk_globex_hello", path: "/hello")]),
    ])
}

/// One organisation (tenant) of the emulator.
public struct StagingOrg: Sendable, Codable, Equatable {
    /// The org key of link URLs: `https://host/{orgKey}/{shortCode}`.
    public var orgKey: String
    /// `false` for a suspended org: its links answer 410 and its AASA entry is left out.
    public var active: Bool
    /// The org's API keys (CLIENT and SERVER tier, revoked, rotated).
    public var apiKeys: [StagingAPIKey]
    /// The iOS app configuration served in the AASA file (docs/CONTRACT.md §5), if any.
    public var ios: StagingIOSApp?
    /// The org's short links.
    public var links: [StagingLink]

    /// An org; active, no keys, no iOS config and no links unless given.
    public init(
        orgKey: String, active: Bool = true, apiKeys: [StagingAPIKey] = [], ios: StagingIOSApp? = nil,
        links: [StagingLink] = []
    ) {
        self.orgKey = orgKey
        self.active = active
        self.apiKeys = apiKeys
        self.ios = ios
        self.links = links
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case orgKey, active, apiKeys, ios, links }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        orgKey = try c.decode(String.self, forKey: .orgKey)
        active = try c.decodeIfPresent(Bool.self, forKey: .active) ?? true
        apiKeys = try c.decodeIfPresent([StagingAPIKey].self, forKey: .apiKeys) ?? []
        ios = try c.decodeIfPresent(StagingIOSApp.self, forKey: .ios)
        links = try c.decodeIfPresent([StagingLink].self, forKey: .links) ?? []
    }
}

/// The tier of an API key: the SDK needs `CLIENT`; `SERVER` keys get 403 on `/sdk/*`.
public enum StagingKeyTier: String, Sendable, Codable, CaseIterable {
    case client = "CLIENT"
    case server = "SERVER"

    public init(from decoder: any Decoder) throws { self = try decoder.decodeCase(Self.self) }
}

/// One API key of an org.
public struct StagingAPIKey: Sendable, Codable, Equatable {
    /// The whole key, e.g. `opl_sdk_test_acme_client`.
    public var key: String
    /// `CLIENT` (the SDK's) or `SERVER` (403 on `/sdk/*`).
    public var tier: StagingKeyTier
    /// A revoked key answers 401 `Invalid API key`.
    public var revoked: Bool
    /// When the key was rotated out, in seconds since the Unix epoch; it stays valid for the
    /// rotation grace (24 h by default) after that.
    public var rotatedAt: Double?
    /// Alternative to `rotatedAt`: rotated this many seconds before the emulator started.
    public var rotatedAgoSeconds: Double?

    /// A key; valid forever unless `revoked` or rotated (`rotatedAt` / `rotatedAgoSeconds`).
    public init(
        key: String, tier: StagingKeyTier, revoked: Bool = false, rotatedAt: Double? = nil,
        rotatedAgoSeconds: Double? = nil
    ) {
        self.key = key
        self.tier = tier
        self.revoked = revoked
        self.rotatedAt = rotatedAt
        self.rotatedAgoSeconds = rotatedAgoSeconds
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case key, tier, revoked, rotatedAt, rotatedAgoSeconds }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        key = try c.decode(String.self, forKey: .key)
        tier = try c.decodeIfPresent(StagingKeyTier.self, forKey: .tier) ?? .client
        revoked = try c.decodeIfPresent(Bool.self, forKey: .revoked) ?? false
        rotatedAt = try c.decodeIfPresent(Double.self, forKey: .rotatedAt)
        rotatedAgoSeconds = try c.decodeIfPresent(Double.self, forKey: .rotatedAgoSeconds)
    }
}

/// An org's iOS app configuration (docs/CONTRACT.md §5): the AASA `appID` is `teamId.bundleId`.
public struct StagingIOSApp: Sendable, Codable, Equatable {
    /// The Apple team id; an org without one is left out of the AASA file.
    public var teamId: String?
    /// The app's bundle id.
    public var bundleId: String
    /// Custom verified link hosts: their AASA file carries this org alone.
    public var customHosts: [String]

    /// An iOS app configuration.
    public init(teamId: String?, bundleId: String, customHosts: [String] = []) {
        self.teamId = teamId
        self.bundleId = bundleId
        self.customHosts = customHosts
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case teamId, bundleId, customHosts }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        teamId = try c.decodeIfPresent(String.self, forKey: .teamId)
        bundleId = try c.decode(String.self, forKey: .bundleId)
        customHosts = try c.decodeIfPresent([String].self, forKey: .customHosts) ?? []
    }
}

/// One short link of an org.
public struct StagingLink: Sendable, Codable, Equatable {
    /// The last path segment of the link URL.
    public var shortCode: String
    /// The id `/data` and `/match` answer with, e.g. `lnk_welcome`.
    public var linkId: String
    /// The in-app path, e.g. `/promo/summer`.
    public var path: String
    /// Flat string parameters; `nil` is sent as JSON `null`.
    public var params: [String: String]?
    /// `false` for an inactive or expired link: `/data` answers 410.
    public var active: Bool

    /// An active link unless `active` is `false`.
    public init(shortCode: String, linkId: String, path: String, params: [String: String]? = nil, active: Bool = true) {
        self.shortCode = shortCode
        self.linkId = linkId
        self.path = path
        self.params = params
        self.active = active
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case shortCode, linkId, path, params, active }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.strictContainer(keyedBy: CodingKeys.self)
        shortCode = try c.decode(String.self, forKey: .shortCode)
        linkId = try c.decode(String.self, forKey: .linkId)
        path = try c.decode(String.self, forKey: .path)
        params = try c.decodeIfPresent([String: String].self, forKey: .params)
        active = try c.decodeIfPresent(Bool.self, forKey: .active) ?? true
    }
}
