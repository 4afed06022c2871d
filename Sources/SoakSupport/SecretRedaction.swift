/// The one shape in which an API key, an admin token or a `--header` value may appear in
/// anything the soak tool prints or writes: a recognisable prefix, `…`, and the last 4
/// characters (`opl_sdk_live_S3CR3TVALUE0042` → `opl_sdk_live_…0042`).
///
/// The prefix is the key family (`opl_sdk_live_`, `opl_sdk_test_`, `opl_sdk_`, `opl_`) or an
/// HTTP authentication scheme (`Bearer `, `Basic `); the last 4 characters are shown only when
/// at least 8 characters stay hidden, so a short secret shows no characters at all. Applying it
/// to a redacted value returns that value, so a report read back and redacted again keeps its
/// fingerprint.
package enum SecretRedaction {
    /// Key families whose prefix says which kind of key it is without giving any of it away.
    static let keyPrefixes = [
        "opl_sdk_live_", "opl_sdk_test_", "opl_srv_live_", "opl_srv_test_", "opl_sdk_", "opl_srv_", "opl_",
    ]

    /// The marker between the shown prefix and the shown suffix.
    package static let marker = "…"

    /// `secret` in its redacted form (see the type's summary); empty stays empty.
    package static func redact(_ secret: String) -> String {
        if secret.isEmpty || isRedacted(secret) { return secret }
        return shownPrefix(of: secret) + marker + shownSuffix(of: secret)
    }

    /// The last 4 characters of `secret` when the redaction shows them (at least 8 characters
    /// stay hidden behind its prefix), else empty: the most of a key any output may carry,
    /// e.g. the ledger's `apiKeySuffix`.
    package static func shownSuffix(of secret: String) -> String {
        let hidden = secret.dropFirst(shownPrefix(of: secret).count)
        return hidden.count >= 12 ? String(hidden.suffix(4)) : ""
    }

    /// Whether `text` already is in the redacted form (it carries the marker).
    package static func isRedacted(_ text: String) -> Bool { text.contains(marker) }

    private static func shownPrefix(of secret: String) -> String {
        if let family = keyPrefixes.first(where: { secret.hasPrefix($0) }) { return family }
        // An authentication scheme (one word, then a space) says what kind of credential follows.
        if let space = secret.firstIndex(of: " "), secret[..<space].allSatisfy({ $0.isLetter }),
            secret.distance(from: secret.startIndex, to: space) <= 16
        {
            return String(secret[...space])
        }
        return ""
    }
}
