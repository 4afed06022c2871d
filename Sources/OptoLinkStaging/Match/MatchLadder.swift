/// The signals a `POST /match` body carries, plus the client IP.
struct MatchQuery: Sendable {
    var ip: String
    var platform: String
    var osVersion: String
    var language: String
    /// `nil` when the body has no `timezone` key (iOS); the click side stores `''` for Safari.
    var timezone: String?
    var clipboardToken: String?
}

/// The rung of the ladder that matched, with its wire values (docs/CONTRACT.md §1, §4).
enum MatchMethodRung: String, Sendable {
    case clipboard = "CLIPBOARD"
    case fingerprintExact = "FINGERPRINT_EXACT"
    case fingerprintScored = "FINGERPRINT_SCORED"
    case ipFuzzy = "IP_FUZZY"

    /// The lower-case confidence the wire carries.
    var confidence: String {
        switch self {
        case .clipboard: "exact"
        case .fingerprintExact: "high"
        case .fingerprintScored: "medium"
        case .ipFuzzy: "low"
        }
    }
}

/// A hit of the ladder: the consumed click, the rung, and the score on FINGERPRINT_SCORED.
struct MatchHit: Sendable {
    var click: Click
    var method: MatchMethodRung
    var score: Int?
}

extension MatchQuery {
    /// The clipboard token in either form the SDK may send: `opl_…` or a URL with `?opl_click=`.
    var normalizedToken: String? {
        guard let raw = clipboardToken, !raw.isEmpty else { return nil }
        if raw.hasPrefix("opl_") { return raw }
        guard let range = raw.range(of: "opl_click=") else { return nil }
        let token = raw[range.upperBound...].prefix { $0 != "&" && $0 != "#" }
        return token.isEmpty ? nil : String(token)
    }

    /// The FINGERPRINT_EXACT key of this query; a missing timezone counts as `''`.
    var fingerprint: String {
        Click.fingerprint(
            ip: ip, platform: platform, osVersion: osVersion, language: language, timezone: timezone ?? "")
    }

    /// The weighted score of `click` against this query.
    func score(_ click: Click, _ s: StagingMatchSettings) -> Int {
        var score = 0
        if click.signals.platform.lowercased() == platform.lowercased() { score += s.platformWeight }
        if click.ip == ip { score += s.ipWeight }
        if !osVersion.isEmpty && click.signals.osVersion == BrowserSignals.majorMinor(osVersion) {
            score += s.osVersionWeight
        }
        if !language.isEmpty && click.signals.language.lowercased() == language.lowercased() {
            score += s.languageWeight
        }
        if click.timezone == (timezone ?? "") { score += s.timezoneWeight }
        return score
    }
}
