import OptoLinkHTTP

extension StagingBackend {
    /// `GET /.well-known/apple-app-site-association` by `Host` (docs/CONTRACT.md §5): a custom verified
    /// host gets its org alone plus `webcredentials`; any other host (the platform default)
    /// aggregates every active org with a team id; nothing to publish → 404 `No iOS app configuration`.
    func handleAASA(_ context: RequestContext) -> RouteOutcome {
        let host = Self.hostName(context.request.headers["Host"] ?? "")
        let orgs: [StagingOrg]
        let single: Bool
        if let org = fixtures.orgForCustomHost(host) {
            orgs = org.active ? [org] : []
            single = true
        } else {
            orgs = fixtures.fixtures.orgs.filter(\.active)
            single = false
        }
        let entries: [(appID: String, orgKey: String)] = orgs.compactMap { org in
            guard let ios = org.ios, let team = ios.teamId, !team.isEmpty else { return nil }
            return ("\(team).\(ios.bundleId)", org.orgKey)
        }
        guard !entries.isEmpty else { return RouteOutcome(errorResponse(404, "No iOS app configuration", context)) }
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        w.key("applinks")
        w.beginObject()
        w.key("details")
        w.beginArray()
        for entry in entries {
            w.beginObject()
            w.key("appIDs")
            w.beginArray()
            w.string(entry.appID)
            w.endArray()
            w.key("components")
            w.beginArray()
            w.beginObject()
            w.field("/", "/\(entry.orgKey)/*")
            w.endObject()
            w.endArray()
            w.endObject()
        }
        w.endArray()
        w.endObject()
        if single {
            w.key("webcredentials")
            w.beginObject()
            w.key("apps")
            w.beginArray()
            for entry in entries { w.string(entry.appID) }
            w.endArray()
            w.endObject()
        }
        w.endObject()
        let headers: HTTPHeaders = ["Content-Type": "application/json", "Cache-Control": "public, max-age=3600"]
        return RouteOutcome(HTTPResponse(status: 200, headers: headers, body: w.bytes), committed: true)
    }

    /// `links.acme.test:8080` → `links.acme.test`; `[::1]:8080` → `::1`.
    static func hostName(_ header: String) -> String {
        if header.hasPrefix("["), let close = header.firstIndex(of: "]") {
            return String(header[header.index(after: header.startIndex)..<close])
        }
        if let colon = header.lastIndex(of: ":"), header.firstIndex(of: ":") == colon {
            return String(header[..<colon]).lowercased()
        }
        return header.lowercased()
    }
}
