import OptoLinkHTTP

extension StagingBackend {
    /// `POST /match` (docs/CONTRACT.md §1, §4): 201 hit or miss; rate limited per client IP.
    func handleMatch(_ context: RequestContext) -> RouteOutcome {
        var body: RequestBody
        switch RequestBody.parse(context.request.body) {
        case .success(let parsed): body = parsed
        case .failure(let error): return RouteOutcome(validationResponse([error.issue], context))
        }
        if case .limited(let n) = limiter.hit(.match, key: context.ip, now: context.now) {
            return RouteOutcome(rateLimitedResponse(retryAfterSeconds: n, context))
        }
        let deviceId = body.string("deviceId", required: true, minLength: 8)
        let query = MatchQuery(
            ip: context.ip, platform: body.string("platform") ?? "", osVersion: body.string("osVersion") ?? "",
            language: body.string("language") ?? "", timezone: body.string("timezone"),
            clipboardToken: body.string("clipboardToken"))
        _ = body.string("deviceModel")
        guard body.issues.isEmpty, let deviceId else { return RouteOutcome(validationResponse(body.issues, context)) }

        devices.touch(deviceId, now: context.now)
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        if let hit = clicks.match(query, now: context.now, consume: true) {
            w.key("matched")
            w.bool(true)
            w.field("matchMethod", hit.method.rawValue)
            w.field("matchConfidence", hit.method.confidence)
            if let score = hit.score {
                w.key("matchScore")
                w.int(score)
            }
            w.field("linkId", hit.click.linkId)
            w.field("path", hit.click.path)
            w.key("params")
            if let params = hit.click.params { w.stringMap(params) } else { w.null() }
        } else {
            w.key("matched")
            w.bool(false)
            w.field("matchMethod", "NONE")
        }
        w.endObject()
        return RouteOutcome(json(201, w), committed: true)
    }
}
