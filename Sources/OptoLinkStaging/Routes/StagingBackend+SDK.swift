import OptoLinkHTTP

extension StagingBackend {
    /// The maximum serialized size of an event's properties, in bytes (CONTRACT §1).
    static let maxPropertiesBytes = 10_240

    /// A request to `/sdk/*` that passed parsing, the throttler and the key check.
    struct SDKRequest {
        var body: RequestBody
        var apiKey: String
        var orgKey: String
    }

    /// Parse → rate limit (per key, `bucket`) → API key, the common front of every `/sdk/*` route.
    func admitSDK(_ context: RequestContext, bucket: StagingBucketClass) -> Result<SDKRequest, Refusal> {
        let body: RequestBody
        switch RequestBody.parse(context.request.body) {
        case .success(let parsed): body = parsed
        case .failure(let error): return .failure(Refusal(response: validationResponse([error.issue], context)))
        }
        let token = Self.bearerToken(context.request.headers["Authorization"])
        let throttleKey = token.flatMap { $0.isEmpty ? nil : $0 } ?? "ip:\(context.ip)"
        if case .limited(let n) = limiter.hit(bucket, key: throttleKey, now: context.now) {
            return .failure(Refusal(response: rateLimitedResponse(retryAfterSeconds: n, context)))
        }
        guard context.request.headers["Authorization"] != nil else {
            return .failure(Refusal(response: errorResponse(401, "Missing Authorization header", context)))
        }
        guard let token, !token.isEmpty else {
            return .failure(Refusal(response: errorResponse(401, "Invalid Authorization format", context)))
        }
        guard let record = fixtures.key(token), !record.key.revoked,
            record.validUntil.map({ context.now <= $0 }) ?? true,
            fixtures.org(record.orgKey)?.active ?? false
        else {
            return .failure(Refusal(response: errorResponse(401, "Invalid API key", context)))
        }
        guard record.key.tier == .client else {
            return .failure(
                Refusal(
                    response: errorResponse(
                        403, "API key tier '\(record.key.tier.rawValue)' is not permitted on this endpoint (requires 'CLIENT')",
                        context)))
        }
        return .success(SDKRequest(body: body, apiKey: token, orgKey: record.orgKey))
    }

    /// The token of `Bearer <token>`; `nil` when the header is absent or not of that form.
    static func bearerToken(_ header: String?) -> String? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1])
    }

    /// `POST /sdk/session` (CONTRACT §1): 200 `{ok, deviceId, firstSeenAt, lastSeenAt}`.
    func handleSession(_ context: RequestContext) -> RouteOutcome {
        var request: SDKRequest
        switch admitSDK(context, bucket: .sdk) {
        case .success(let admitted): request = admitted
        case .failure(let refusal): return RouteOutcome(refusal.response)
        }
        let deviceId = request.body.string("deviceId", required: true, minLength: 8)
        for field in ["platform", "osVersion", "sdkVersion"] { _ = request.body.string(field) }
        guard request.body.issues.isEmpty, let deviceId else {
            return RouteOutcome(validationResponse(request.body.issues, context))
        }
        let device = devices.touch(deviceId, now: context.now)
        ledgerStore.append(
            arrivedAt: context.now, endpoint: .session, deviceId: deviceId, apiKey: request.apiKey,
            faultAfterCommit: context.faultAfterCommit)
        var w = JSONWriter(capacity: 160)
        w.beginObject()
        w.key("ok")
        w.bool(true)
        w.field("deviceId", deviceId)
        w.field("firstSeenAt", ISO8601.string(fromEpochSeconds: device.firstSeenAt))
        w.field("lastSeenAt", ISO8601.string(fromEpochSeconds: device.lastSeenAt))
        w.endObject()
        return RouteOutcome(json(200, w), committed: true)
    }

    /// `POST /sdk/identity` (CONTRACT §1): 200 `{endUserId, rebound}`; 404 for an unknown device.
    func handleIdentity(_ context: RequestContext) -> RouteOutcome {
        var request: SDKRequest
        switch admitSDK(context, bucket: .sdk) {
        case .success(let admitted): request = admitted
        case .failure(let refusal): return RouteOutcome(refusal.response)
        }
        let deviceId = request.body.string("deviceId", required: true, minLength: 8)
        let externalId = request.body.string("externalId", required: true, minLength: 1)
        guard request.body.issues.isEmpty, let deviceId, let externalId else {
            return RouteOutcome(validationResponse(request.body.issues, context))
        }
        if let unknown = unknownDevice(deviceId, context) { return unknown }
        let rebound = devices.bind(deviceId, externalId: externalId, now: context.now)
        ledgerStore.append(
            arrivedAt: context.now, endpoint: .identity, deviceId: deviceId, apiKey: request.apiKey,
            externalId: externalId, faultAfterCommit: context.faultAfterCommit)
        var w = JSONWriter(capacity: 96)
        w.beginObject()
        let endUser = Self.fnv1a("\(request.orgKey):\(externalId)")
        w.field("endUserId", "eu_" + String(endUser, radix: 16))
        w.key("rebound")
        w.bool(rebound)
        w.endObject()
        return RouteOutcome(json(200, w), committed: true)
    }

    /// `POST /sdk/identity/clear` (CONTRACT §1): 200 `{cleared:true}`; 404 for an unknown device.
    func handleIdentityClear(_ context: RequestContext) -> RouteOutcome {
        var request: SDKRequest
        switch admitSDK(context, bucket: .sdk) {
        case .success(let admitted): request = admitted
        case .failure(let refusal): return RouteOutcome(refusal.response)
        }
        let deviceId = request.body.string("deviceId", required: true, minLength: 8)
        guard request.body.issues.isEmpty, let deviceId else {
            return RouteOutcome(validationResponse(request.body.issues, context))
        }
        if let unknown = unknownDevice(deviceId, context) { return unknown }
        devices.unbind(deviceId, now: context.now)
        ledgerStore.append(
            arrivedAt: context.now, endpoint: .identityClear, deviceId: deviceId, apiKey: request.apiKey,
            faultAfterCommit: context.faultAfterCommit)
        return RouteOutcome(
            HTTPResponse(status: 200, headers: Self.jsonHeaders, body: Array(#"{"cleared":true}"#.utf8)),
            committed: true)
    }

    /// `POST /sdk/events` (CONTRACT §1): 200 `{ok:true}`; 400 for an empty name or oversized
    /// or non-flat properties; 404 for an unknown device; limited per key.
    func handleEvents(_ context: RequestContext) -> RouteOutcome {
        var request: SDKRequest
        switch admitSDK(context, bucket: .events) {
        case .success(let admitted): request = admitted
        case .failure(let refusal): return RouteOutcome(refusal.response)
        }
        let deviceId = request.body.string("deviceId", required: true, minLength: 8)
        let eventName = request.body.string("eventName", required: true, minLength: 1)
        let properties = request.body.stringMap("properties", maxBytes: Self.maxPropertiesBytes)
        guard request.body.issues.isEmpty, let deviceId, let eventName else {
            return RouteOutcome(validationResponse(request.body.issues, context))
        }
        if let unknown = unknownDevice(deviceId, context) { return unknown }
        devices.touch(deviceId, now: context.now)
        ledgerStore.append(
            arrivedAt: context.now, endpoint: .events, deviceId: deviceId, apiKey: request.apiKey, eventName: eventName,
            properties: properties, faultAfterCommit: context.faultAfterCommit)
        return RouteOutcome(
            HTTPResponse(status: 200, headers: Self.jsonHeaders, body: Array(#"{"ok":true}"#.utf8)), committed: true)
    }

    private func unknownDevice(_ deviceId: String, _ context: RequestContext) -> RouteOutcome? {
        devices.isKnown(deviceId)
            ? nil : RouteOutcome(errorResponse(404, "Unknown deviceId \(deviceId) — call /sdk/session first", context))
    }
}
