/// What a click's browser reveals: platform and major.minor OS from the User-Agent,
/// language from Accept-Language (docs/CONTRACT.md §4, "Clicks").
package struct BrowserSignals: Sendable, Equatable {
    /// `iOS`, `Android` or `Other`.
    package var platform: String
    /// Major.minor, e.g. `18.1`; empty when unknown.
    package var osVersion: String
    /// `iPhone`, `iPad` or empty.
    package var deviceModel: String
    /// The first Accept-Language tag, e.g. `en-US`; empty when absent.
    package var language: String

    init(platform: String, osVersion: String, deviceModel: String, language: String) {
        self.platform = platform
        self.osVersion = osVersion
        self.deviceModel = deviceModel
        self.language = language
    }

    /// Parses a User-Agent and an Accept-Language header.
    package init(userAgent: String?, acceptLanguage: String?) {
        let ua = userAgent ?? ""
        language = Self.firstLanguage(acceptLanguage)
        if let model = ["iPhone", "iPad", "iPod"].first(where: { ua.contains("(\($0);") }) {
            platform = "iOS"
            deviceModel = model
            osVersion = Self.version(after: " OS ", in: ua, separator: "_")
        } else if ua.contains("Android") {
            platform = "Android"
            deviceModel = ""
            osVersion = Self.version(after: "Android ", in: ua, separator: ".")
        } else {
            platform = "Other"
            deviceModel = ""
            osVersion = ""
        }
    }

    /// Whether the browser is Safari on iOS (no client hints, so the click stores `tz ''`).
    var isSafariLike: Bool { platform == "iOS" }

    /// `18.1.2` → `18.1`, `17` → `17.0`, `18_1` handled by the UA parser; empty stays empty.
    static func majorMinor(_ version: String) -> String {
        guard !version.isEmpty else { return "" }
        let parts = version.split(separator: ".", omittingEmptySubsequences: false)
        let major = parts.first.map(String.init) ?? ""
        let minor = parts.count > 1 && !parts[1].isEmpty ? String(parts[1]) : "0"
        return major + "." + minor
    }

    private static func version(after marker: String, in ua: String, separator: Character) -> String {
        guard let range = ua.range(of: marker) else { return "" }
        let digits = ua[range.upperBound...].prefix { $0.isNumber || $0 == separator }
        let normalized = digits.split(separator: separator).map(String.init).joined(separator: ".")
        return majorMinor(normalized)
    }

    private static func firstLanguage(_ header: String?) -> String {
        guard let header else { return "" }
        let first = header.split(separator: ",").first.map(String.init) ?? ""
        let tag = first.split(separator: ";").first.map(String.init) ?? ""
        let trimmed = tag.trimmingCharacters(in: " \t")
        return trimmed == "*" ? "" : trimmed
    }
}

extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        let chars = Set(set)
        let start = firstIndex { !chars.contains($0) } ?? endIndex
        let end = lastIndex { !chars.contains($0) }.map { index(after: $0) } ?? start
        return start < end ? String(self[start..<end]) : ""
    }
}
