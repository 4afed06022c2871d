import SoakSupport

extension SoakProfile {
    /// This profile as a report keeps it (`profile.json`) and fingerprints it: `sdk.apiKey`
    /// redacted by ``SecretRedaction`` and marked `sdk.apiKeyRedacted`, and every API key of the
    /// `backend` section's fixtures (`backend.fixtures.orgs[].apiKeys[].key`) redacted too. Two
    /// profiles whose keys differ only behind the redaction give the same result.
    package func redactingSecrets() -> SoakProfile {
        var copy = self
        if !SecretRedaction.isRedacted(sdk.apiKey) {
            copy.sdk.apiKey = SecretRedaction.redact(sdk.apiKey)
        }
        copy.sdk.apiKeyRedacted = true
        copy.backend = backend.map(Self.redactingFixtureKeys)
        return copy
    }

    /// `backend` with the fixtures' keys redacted; two keys that would redact alike get `#2`,
    /// `#3`, … so the section still passes the emulator's duplicate-key check when read back.
    private static func redactingFixtureKeys(_ backend: JSONValue) -> JSONValue {
        guard case .object(var section) = backend, case .object(var fixtures)? = section["fixtures"],
            case .array(let orgs)? = fixtures["orgs"]
        else { return backend }
        var used = Set<String>()
        fixtures["orgs"] = .array(
            orgs.map { org in
                guard case .object(var fields) = org, case .array(let keys)? = fields["apiKeys"] else { return org }
                fields["apiKeys"] = .array(
                    keys.map { entry in
                        guard case .object(var key) = entry, case .string(let secret)? = key["key"] else {
                            return entry
                        }
                        let redacted = SecretRedaction.redact(secret)
                        var unique = redacted
                        var count = 1
                        while !used.insert(unique).inserted {
                            count += 1
                            unique = "\(redacted)#\(count)"
                        }
                        key["key"] = .string(unique)
                        return .object(key)
                    })
                return .object(fields)
            })
        section["fixtures"] = .object(fixtures)
        return .object(section)
    }
}
