import SoakRecords

/// Which endpoints feed one declared rate-limit bucket, from the bucket's name in the profile.
///
/// Known names: `match`, `data`, `events`, `session_identity` (session + identity + identity
/// clear, the shared bucket of docs/CONTRACT.md §1, the same name as in `backend.limits`; the old
/// name `sdk` is an alias). Any other name is a `+`-joined list of endpoint names
/// (`"session+identity+identity_clear"`).
package enum LimitBucket {
    /// The endpoints of a bucket name, in declaration order.
    /// - Throws: ``VerdictsConfigurationError/unknownBucket(_:)`` for a name that maps to no endpoint.
    package static func endpoints(of name: String) throws -> [ContractEndpoint] {
        switch name {
        case "match": return [.match]
        case "data": return [.data]
        case "events": return [.events]
        case "session_identity", "sdk", "session+identity": return [.session, .identity, .identityClear]
        default:
            var result: [ContractEndpoint] = []
            for part in name.split(separator: "+") {
                guard let endpoint = ContractEndpoint(rawValue: String(part)) else {
                    throw VerdictsConfigurationError.unknownBucket(name)
                }
                result.append(endpoint)
            }
            guard !result.isEmpty else { throw VerdictsConfigurationError.unknownBucket(name) }
            return result
        }
    }
}
