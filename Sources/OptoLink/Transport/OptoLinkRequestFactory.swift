import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Builds the wire requests of docs/CONTRACT.md §1: URL from `baseUrl`, the audit headers on every
/// request, `Authorization: Bearer` on `/sdk/*` only, JSON bodies with no `null` values.
struct OptoLinkRequestFactory: Sendable {
    /// `baseUrl` as text without a trailing `/`.
    let base: String
    let apiKey: String
    /// The fixed-path URLs and `POST` headers, shared by every instance with this base and key.
    let templates: Templates

    init(baseUrl: URL, apiKey: String) {
        var base = baseUrl.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.apiKey = apiKey
        self.templates = Templates.shared(base: base, apiKey: apiKey)
    }

    /// What every request to one base URL with one API key shares: the URL of each fixed-path
    /// endpoint (`nil` when `base + path` is not a URL) and the `POST` headers with and without
    /// `Authorization`. Built once per base and key in a process, not per request: parsing a URL
    /// and hashing a header dictionary cost more per attempt than the rest of the request.
    final class Templates: Sendable {
        let urls: [OptoLinkEndpoint: URL]
        let sdkPostHeaders: [String: String]
        let publicPostHeaders: [String: String]

        init(base: String, apiKey: String) {
            var urls: [OptoLinkEndpoint: URL] = [:]
            for endpoint in OptoLinkEndpoint.allCases {
                urls[endpoint] = URL(string: base + OptoLinkRequestFactory.path(of: endpoint))
            }
            self.urls = urls
            var headers = OptoLinkRequestFactory.auditHeaders(apiKey: apiKey)
            headers["Content-Type"] = "application/json"
            publicPostHeaders = headers
            headers["Authorization"] = "Bearer \(apiKey)"
            sdkPostHeaders = headers
        }

        private struct Key: Hashable {
            var base: String
            var apiKey: String
        }

        /// The most base/key pairs kept; a process that uses more (tests with many servers) starts over.
        private static let capacity = 64
        private static let cache = LockedBox<[Key: Templates]>([:])

        static func shared(base: String, apiKey: String) -> Templates {
            let key = Key(base: base, apiKey: apiKey)
            if let known = cache.withLock({ $0[key] }) { return known }
            let made = Templates(base: base, apiKey: apiKey)
            cache.withLock { cache in
                if cache.count >= capacity { cache.removeAll() }
                cache[key] = made
            }
            return made
        }
    }

    /// Characters left unescaped in a path segment or query value (RFC 3986 "unreserved").
    static let unreserved = CharacterSet(
        charactersIn:
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Percent-encodes everything but the unreserved characters.
    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// The request path of an endpoint (without query).
    static func path(of endpoint: OptoLinkEndpoint) -> String {
        switch endpoint {
        case .match: "/match"
        case .data: "/data"
        case .session: "/sdk/session"
        case .identity: "/sdk/identity"
        case .identityClear: "/sdk/identity/clear"
        case .events: "/sdk/events"
        }
    }

    /// A `POST` with a JSON body to a fixed endpoint.
    func post(_ endpoint: OptoLinkEndpoint, body: [String: Any]) throws(OptoLinkConnectionError) -> OptoLinkHTTPRequest
    {
        let data =
            OptoLinkJSONBody.encode(body)
            ?? (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data("{}".utf8)
        return try post(endpoint, json: data)
    }

    /// A `POST` of a JSON body already written (`data`) to a fixed endpoint.
    func post(_ endpoint: OptoLinkEndpoint, json data: Data) throws(OptoLinkConnectionError) -> OptoLinkHTTPRequest {
        guard let url = templates.urls[endpoint] else {
            throw OptoLinkConnectionError(underlying: URLError(.badURL))
        }
        let headers = endpoint.retryClass != .repeatSafe ? templates.sdkPostHeaders : templates.publicPostHeaders
        return OptoLinkHTTPRequest(method: "POST", url: url, headers: headers, body: data)
    }

    /// `GET /{orgKey}/{shortCode}/data?deviceId=…` (Universal Link resolution).
    func linkData(orgKey: String, shortCode: String, deviceId: String) throws(OptoLinkConnectionError)
        -> OptoLinkHTTPRequest
    {
        let path = "/\(Self.encode(orgKey))/\(Self.encode(shortCode))/data?deviceId=\(Self.encode(deviceId))"
        guard let url = URL(string: base + path) else {
            throw OptoLinkConnectionError(underlying: URLError(.badURL))
        }
        return OptoLinkHTTPRequest(method: "GET", url: url, headers: Self.auditHeaders(apiKey: apiKey))
    }

    /// The audit headers every request carries (`Authorization` is added for `/sdk/*` only).
    static func auditHeaders(apiKey: String) -> [String: String] {
        ["X-API-Key": apiKey, "X-OptoLink-SDK": OptoLinkVersion.auditHeader, "Accept": "application/json"]
    }
}
