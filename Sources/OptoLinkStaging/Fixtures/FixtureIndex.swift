/// Fast look-ups over ``StagingFixtures`` built once at start (read-only afterwards).
struct FixtureIndex: Sendable {
    struct KeyRecord: Sendable {
        var orgKey: String
        var key: StagingAPIKey
        /// Epoch seconds after which the key stops working, or `nil`.
        var validUntil: Double?
    }

    struct LinkRecord: Sendable {
        var org: StagingOrg
        var link: StagingLink
    }

    let fixtures: StagingFixtures
    private let keys: [String: KeyRecord]
    private let links: [String: [String: StagingLink]]
    private let orgs: [String: StagingOrg]
    private let hostToOrg: [String: String]

    init(_ fixtures: StagingFixtures, startedAt: Double, rotationGraceSeconds: Double) {
        self.fixtures = fixtures
        var keys: [String: KeyRecord] = [:]
        var links: [String: [String: StagingLink]] = [:]
        var orgs: [String: StagingOrg] = [:]
        var hosts: [String: String] = [:]
        for org in fixtures.orgs {
            orgs[org.orgKey] = org
            for key in org.apiKeys {
                let rotatedAt = key.rotatedAt ?? key.rotatedAgoSeconds.map { startedAt - $0 }
                keys[key.key] = KeyRecord(
                    orgKey: org.orgKey, key: key, validUntil: rotatedAt.map { $0 + rotationGraceSeconds })
            }
            var byCode: [String: StagingLink] = [:]
            for link in org.links { byCode[link.shortCode] = link }
            links[org.orgKey] = byCode
            for host in org.ios?.customHosts ?? [] { hosts[host.lowercased()] = org.orgKey }
        }
        self.keys = keys
        self.links = links
        self.orgs = orgs
        self.hostToOrg = hosts
    }

    func key(_ token: String) -> KeyRecord? { keys[token] }
    func org(_ orgKey: String) -> StagingOrg? { orgs[orgKey] }
    func link(org orgKey: String, shortCode: String) -> LinkRecord? {
        guard let org = orgs[orgKey], let link = links[orgKey]?[shortCode] else { return nil }
        return LinkRecord(org: org, link: link)
    }
    /// The org whose custom verified host this is, if any.
    func orgForCustomHost(_ host: String) -> StagingOrg? { hostToOrg[host.lowercased()].flatMap { orgs[$0] } }
}
