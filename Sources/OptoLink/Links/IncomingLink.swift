import Foundation

/// What `handle(url:)` received, classified (docs/CONTRACT.md §2, "handle(url:)").
enum IncomingLink: Equatable {
    /// `https://{any host}/{orgKey}/{shortCode}` with the configured org: resolve via `/data`.
    case universal(shortCode: String)
    /// Anything else (custom scheme, another org, other shapes): emitted raw.
    case raw

    /// Classifies `url` against the configured `orgKey`: an `https` URL whose path is
    /// exactly two non-empty segments, the first equal to `orgKey`.
    static func classify(_ url: URL, orgKey: String) -> IncomingLink {
        guard url.scheme?.lowercased() == "https", let host = url.host, !host.isEmpty else { return .raw }
        let segments = url.pathComponents.filter { $0 != "/" }
        guard segments.count == 2, segments[0] == orgKey, !segments[1].isEmpty else { return .raw }
        return .universal(shortCode: segments[1])
    }

    /// The query as a flat map, each name and value percent-decoded exactly once (a
    /// literal `+` stays `+`; the last duplicate wins); `nil` when the URL has no query items.
    static func queryParams(of url: URL) -> [String: String]? {
        guard let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems, !items.isEmpty else {
            return nil
        }
        var params: [String: String] = [:]
        for item in items {
            params[item.name] = item.value ?? ""
        }
        return params
    }

    /// The raw emission for `url`: `linkId == nil`, `path = url.path`, `params` = query.
    static func rawData(for url: URL) -> OptoLinkData {
        OptoLinkData(
            linkId: nil, path: url.path, params: queryParams(of: url),
            matchMethod: .direct, confidence: .exact, isDeferred: false, score: nil)
    }
}
