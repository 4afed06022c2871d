/// Reads the clipboard payload out of the emulator's click page:
/// `<input id="cbt" value="https://HOST/acme/welcome?opl_click=opl_…">` (HTML-escaped).
package enum ClickPage {
    /// The unescaped `value` of the `cbt` input, or `nil` when the page has none.
    package static func clipboardPayload(in html: String) -> String? {
        guard let idRange = html.range(of: "id=\"cbt\"") else { return nil }
        let tagStart = html[..<idRange.lowerBound].lastIndex(of: "<") ?? idRange.lowerBound
        guard let tagEnd = html[idRange.upperBound...].firstIndex(of: ">") else { return nil }
        let tag = html[tagStart..<tagEnd]
        guard let valueStart = tag.range(of: "value=\"") else { return nil }
        guard let quote = tag[valueStart.upperBound...].firstIndex(of: "\"") else { return nil }
        return unescape(String(tag[valueStart.upperBound..<quote]))
    }

    /// Decodes the HTML entities an attribute value may carry.
    static func unescape(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";"), rest.distance(from: amp, to: semi) <= 10 else {
                out += "&"
                rest = rest[rest.index(after: amp)...]
                continue
            }
            let entity = rest[rest.index(after: amp)..<semi]
            let decoded: String? =
                switch entity {
                case "amp": "&"
                case "quot": "\""
                case "apos": "'"
                case "lt": "<"
                case "gt": ">"
                default:
                    if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
                        UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
                    } else if entity.hasPrefix("#") {
                        UInt32(entity.dropFirst()).flatMap(Unicode.Scalar.init).map { String($0) }
                    } else {
                        nil
                    }
                }
            if let decoded {
                out += decoded
                rest = rest[rest.index(after: semi)...]
            } else {
                out += "&"
                rest = rest[rest.index(after: amp)...]
            }
        }
        return out + rest
    }
}
