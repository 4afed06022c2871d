/// One recorded browser click on a short link (docs/CONTRACT.md §4, "Clicks").
struct Click: Sendable, Equatable {
    /// The clipboard token `opl_…` the redirect page carries.
    var token: String
    var orgKey: String
    var shortCode: String
    var linkId: String
    var path: String
    var params: [String: String]?
    /// The client IP of the click.
    var ip: String
    var signals: BrowserSignals
    /// The browser's time zone; `''` for Safari.
    var timezone: String
    /// Epoch seconds.
    var clickedAt: Double

    /// The FINGERPRINT_EXACT key: `ip:platform:majorMinor:lang:tz`, lower-cased.
    var fingerprint: String {
        Self.fingerprint(
            ip: ip, platform: signals.platform, osVersion: signals.osVersion, language: signals.language,
            timezone: timezone)
    }

    static func fingerprint(ip: String, platform: String, osVersion: String, language: String, timezone: String)
        -> String
    {
        "\(ip):\(platform):\(BrowserSignals.majorMinor(osVersion)):\(language):\(timezone)".lowercased()
    }
}
