import OptoLinkHTTP

extension StagingBackend {
    /// `GET /{orgKey}/{shortCode}/data?deviceId=…` (docs/CONTRACT.md §1): 200 `{linkId, path, params}`,
    /// 404 `Link not found`, 410 for an inactive link or a suspended org; limited per client IP.
    func handleData(_ context: RequestContext, orgKey: String, shortCode: String) -> RouteOutcome {
        if case .limited(let n) = limiter.hit(.data, key: context.ip, now: context.now) {
            return RouteOutcome(rateLimitedResponse(retryAfterSeconds: n, context))
        }
        let record: FixtureIndex.LinkRecord
        switch lookUpLink(orgKey: orgKey, shortCode: shortCode, context) {
        case .success(let found): record = found
        case .failure(let refusal): return RouteOutcome(refusal.response)
        }
        if let deviceId = PercentDecoding.queryValue(context.request.query, "deviceId"), !deviceId.isEmpty {
            devices.touch(deviceId, now: context.now)
        }
        var w = JSONWriter(capacity: 160)
        w.beginObject()
        w.field("linkId", record.link.linkId)
        w.field("path", record.link.path)
        w.key("params")
        if let params = record.link.params { w.stringMap(params) } else { w.null() }
        w.endObject()
        return RouteOutcome(json(200, w), committed: true)
    }

    /// `GET /{orgKey}/{shortCode}` from a browser (docs/CONTRACT.md §4, "Clicks"): records a click and
    /// answers the redirect page whose `<input id="cbt">` holds the link URL with `?opl_click=<token>`.
    func handleClick(_ context: RequestContext, orgKey: String, shortCode: String) -> RouteOutcome {
        let record: FixtureIndex.LinkRecord
        switch lookUpLink(orgKey: orgKey, shortCode: shortCode, context) {
        case .success(let found): record = found
        case .failure(let refusal): return RouteOutcome(refusal.response)
        }
        let headers = context.request.headers
        let signals = BrowserSignals(userAgent: headers["User-Agent"], acceptLanguage: headers["Accept-Language"])
        // Safari sends no client hints, so the click side stores tz ''; other browsers may pass ?tz=.
        let timezone = signals.isSafariLike ? "" : (PercentDecoding.queryValue(context.request.query, "tz") ?? "")
        let token = tokens.next()
        clicks.record(
            Click(
                token: token, orgKey: orgKey, shortCode: shortCode, linkId: record.link.linkId, path: record.link.path,
                params: record.link.params, ip: context.ip, signals: signals, timezone: timezone, clickedAt: context.now
            ))
        // An empty Host is valid (RFC 9112 §3.2) but cannot make a link.
        let host = headers["Host"].flatMap { $0.isEmpty ? nil : $0 } ?? "localhost"
        let url = "https://\(host)/\(orgKey)/\(shortCode)?opl_click=\(token)"
        let page = """
            <!doctype html>
            <html><head><meta charset="utf-8"><title>Opening \(HTMLEscaping.escape(shortCode))…</title></head>
            <body>
            <input id="cbt" type="text" readonly value="\(HTMLEscaping.escape(url))">
            <script>var c=document.getElementById('cbt');c.select();try{document.execCommand('copy')}catch(e){}</script>
            </body></html>

            """
        return RouteOutcome(
            HTTPResponse(status: 200, headers: ["Content-Type": "text/html; charset=utf-8"], body: Array(page.utf8)),
            committed: true)
    }

    struct Refusal: Error {
        var response: HTTPResponse
    }

    /// The link of `orgKey`/`shortCode`: 404 when either is unknown, 410 when the org is
    /// suspended or the link inactive.
    func lookUpLink(orgKey: String, shortCode: String, _ context: RequestContext) -> Result<
        FixtureIndex.LinkRecord, Refusal
    > {
        guard let record = fixtures.link(org: orgKey, shortCode: shortCode) else {
            return .failure(Refusal(response: errorResponse(404, "Link not found", context)))
        }
        guard record.org.active else {
            return .failure(Refusal(response: errorResponse(410, "Organization is suspended", context)))
        }
        guard record.link.active else {
            return .failure(Refusal(response: errorResponse(410, "Link is inactive or expired", context)))
        }
        return .success(record)
    }
}

/// HTML attribute/text escaping for the click page.
enum HTMLEscaping {
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for ch in text {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(ch)
            }
        }
        return out
    }
}
