import Foundation

/// Finds the click token in clipboard text (docs/CONTRACT.md §2, decision 2): either a bare token
/// `opl_…` of at most 100 characters, or a link URL whose `opl_click` query item holds one
/// (the redirect page's iOS payload; the last `opl_click` wins).
enum ClipboardToken {
    static let maximumLength = 100

    static func extract(from text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if isToken(trimmed) { return trimmed }
        guard trimmed.contains("opl_click="), let components = URLComponents(string: trimmed) else { return nil }
        let value = components.queryItems?.last(where: { $0.name == "opl_click" })?.value
        return value.flatMap { isToken($0) ? $0 : nil }
    }

    static func isToken(_ text: String) -> Bool {
        text.hasPrefix("opl_") && text.count <= maximumLength && !text.contains(where: \.isWhitespace)
    }
}
