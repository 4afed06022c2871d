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

    init(baseUrl: URL, apiKey: String) {
        var base = baseUrl.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
        self.apiKey = apiKey
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
        var request = try make(
            method: "POST", path: Self.path(of: endpoint), sdkAuth: endpoint.retryClass != .repeatSafe)
        request.headers["Content-Type"] = "application/json"
        request.body = data
        return request
    }

    /// `GET /{orgKey}/{shortCode}/data?deviceId=…` (Universal Link resolution).
    func linkData(orgKey: String, shortCode: String, deviceId: String) throws(OptoLinkConnectionError)
        -> OptoLinkHTTPRequest
    {
        let path = "/\(Self.encode(orgKey))/\(Self.encode(shortCode))/data?deviceId=\(Self.encode(deviceId))"
        return try make(method: "GET", path: path, sdkAuth: false)
    }

    private func make(method: String, path: String, sdkAuth: Bool) throws(OptoLinkConnectionError)
        -> OptoLinkHTTPRequest
    {
        guard let url = URL(string: base + path) else {
            throw OptoLinkConnectionError(underlying: URLError(.badURL))
        }
        var headers = [
            "X-API-Key": apiKey,
            "X-OptoLink-SDK": OptoLinkVersion.auditHeader,
            "Accept": "application/json",
        ]
        if sdkAuth { headers["Authorization"] = "Bearer \(apiKey)" }
        return OptoLinkHTTPRequest(method: method, url: url, headers: headers)
    }
}
