import Foundation

extension OptoLinkApiError {
    /// Builds the error for a non-2xx response: lifts `message`, `requestId`, `details`
    /// (400 only) from the JSON envelope and `retryAfterSeconds` (429 only) from the
    /// message; `raw` is the body verbatim whatever its format (docs/CONTRACT.md §1).
    static func from(status: Int, body: Data) -> OptoLinkApiError {
        let raw = String(decoding: body, as: UTF8.self)
        let envelope = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        let message = envelope?["message"] as? String
        let requestId = envelope?["requestId"] as? String
        var details: [OptoLinkErrorDetail]?
        if status == 400, let entries = envelope?["details"] as? [Any] {
            details = entries.compactMap { entry in
                guard let entry = entry as? [String: Any], let text = entry["message"] as? String else { return nil }
                return OptoLinkErrorDetail(message: text, field: entry["field"] as? String)
            }
        }
        let retryAfter = status == 429 ? parseRetryAfterSeconds(message ?? raw) : nil
        return OptoLinkApiError(
            status: status, requestId: requestId, details: details,
            retryAfterSeconds: retryAfter, raw: raw, message: message)
    }

    /// The `N` of the first `Retry after N second` in `text` (the contract's regex
    /// `Retry after (\d+) second`, so "second", "seconds" and "second(s)" all match).
    static func parseRetryAfterSeconds(_ text: String) -> Int? {
        let marker = "Retry after "
        var searchStart = text.startIndex
        while let found = text.range(of: marker, range: searchStart..<text.endIndex) {
            let digitsStart = found.upperBound
            var digitsEnd = digitsStart
            while digitsEnd < text.endIndex, let ascii = text[digitsEnd].asciiValue, (48...57).contains(ascii) {
                digitsEnd = text.index(after: digitsEnd)
            }
            if digitsEnd > digitsStart, text[digitsEnd...].hasPrefix(" second") {
                return Int(text[digitsStart..<digitsEnd])
            }
            searchStart = found.upperBound
        }
        return nil
    }
}
