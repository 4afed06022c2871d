/// An event correlation id, `<runId>:<device>:<seq>` (the run id may itself contain colons).
package struct CorrelationId: Equatable {
    package var runId: Substring
    package var device: Substring
    package var sequence: Substring

    /// Splits `text` at its last two colons (one scan of its UTF-8 from the end, no array);
    /// `nil` with fewer than two colons.
    package init?(_ text: String) {
        let utf8 = text.utf8
        let colon = UInt8(ascii: ":")
        guard let last = utf8.lastIndex(of: colon),
            let middle = utf8[..<last].lastIndex(of: colon)
        else { return nil }
        runId = text[..<middle]
        device = text[utf8.index(after: middle)..<last]
        sequence = text[utf8.index(after: last)...]
    }
}
