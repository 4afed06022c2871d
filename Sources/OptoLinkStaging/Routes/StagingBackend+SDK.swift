import OptoLinkHTTP

extension StagingBackend {
    /// The maximum serialized size of an event's properties, in bytes (docs/CONTRACT.md §1).
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
                        403,
                        "API key tier '\(record.key.tier.rawValue)' is not permitted on this endpoint (requires 'CLIENT')",
                        context)))
        }
        return .success(SDKRequest(body: body, apiKey: token, orgKey: record.orgKey))
    }

    /// The token of `Bearer <token>`; `nil` when the header is absent or not of that form.
    package static func bearerToken(_ header: String?) -> String? {
        guard let header else { return nil }
        let bytes = header.utf8
        let scheme = "bearer".utf8
        guard bytes.count > scheme.count,
            zip(bytes.prefix(scheme.count), scheme).allSatisfy({ $0 | 0x20 == $1 }),
            bytes[bytes.index(bytes.startIndex, offsetBy: scheme.count)] == UInt8(ascii: " ")
        else { return nil }
        let rest = header.utf8.dropFirst(scheme.count).drop { $0 == UInt8(ascii: " ") }
        guard !rest.isEmpty, !rest.contains(UInt8(ascii: " ")) else { return nil }
        return String(rest)
    }

    /// The common shape of every `/sdk/*` write: admission (parse → limit → key), then the
    /// body's `deviceId` plus what `read` takes from it (400 on any issue), then — when
    /// `knownDevice` — the 404 for a device never seen, then `commit`.
    private func sdkWrite(
        _ context: RequestContext, bucket: StagingBucketClass, knownDevice: Bool,
        read: (inout RequestBody) -> Void = { _ in }, commit: (SDKRequest, String) -> RouteOutcome
    ) -> RouteOutcome {
        var request: SDKRequest
        switch admitSDK(context, bucket: bucket) {
        case .success(let admitted): request = admitted
        case .failure(let refusal): return RouteOutcome(refusal.response)
        }
        let deviceId = request.body.string("deviceId", required: true, minLength: 8)
        read(&request.body)
        guard request.body.issues.isEmpty, let deviceId else {
            return RouteOutcome(validationResponse(request.body.issues, context))
        }
        if knownDevice && !devices.isKnown(deviceId) {
            return RouteOutcome(errorResponse(404, "Unknown deviceId \(deviceId) — call /sdk/session first", context))
        }
        return commit(request, deviceId)
    }

    /// Appends the accepted write to the ledger, marked with the after-commit fault if one was drawn.
    private func record(
        _ endpoint: StagingEndpoint, _ request: SDKRequest, _ deviceId: String, _ context: RequestContext,
        eventName: String? = nil, externalId: String? = nil, properties: [String: String]? = nil
    ) {
        ledgerStore.append(
            arrivedAt: context.now, endpoint: endpoint, deviceId: deviceId, apiKey: request.apiKey,
            eventName: eventName,
            externalId: externalId, properties: properties, faultAfterCommit: context.faultAfterCommit)
    }

    private static func fixedBody(_ text: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: jsonHeaders, body: Array(text.utf8))
    }

    /// `POST /sdk/session` (docs/CONTRACT.md §1): 200 `{ok, deviceId, firstSeenAt, lastSeenAt}`.
    func handleSession(_ context: RequestContext) -> RouteOutcome {
        sdkWrite(
            context, bucket: .sdk, knownDevice: false,
            read: { body in for field in ["platform", "osVersion", "sdkVersion"] { _ = body.string(field) } },
            commit: { request, deviceId in
                let device = devices.touch(deviceId, now: context.now)
                record(.session, request, deviceId, context)
                var w = JSONWriter(capacity: 160)
                w.beginObject()
                w.key("ok")
                w.bool(true)
                w.field("deviceId", deviceId)
                w.field("firstSeenAt", ISO8601.string(fromEpochSeconds: device.firstSeenAt))
                w.field("lastSeenAt", ISO8601.string(fromEpochSeconds: device.lastSeenAt))
                w.endObject()
                return RouteOutcome(json(200, w), committed: true)
            })
    }

    /// `POST /sdk/identity` (docs/CONTRACT.md §1): 200 `{endUserId, rebound}`; 404 for an unknown device.
    func handleIdentity(_ context: RequestContext) -> RouteOutcome {
        var externalId = ""
        return sdkWrite(
            context, bucket: .sdk, knownDevice: true,
            read: { externalId = $0.string("externalId", required: true, minLength: 1) ?? "" },
            commit: { request, deviceId in
                let rebound = devices.bind(deviceId, externalId: externalId, now: context.now)
                record(.identity, request, deviceId, context, externalId: externalId)
                var w = JSONWriter(capacity: 96)
                w.beginObject()
                w.field("endUserId", "eu_" + String(Self.fnv1a("\(request.orgKey):\(externalId)"), radix: 16))
                w.key("rebound")
                w.bool(rebound)
                w.endObject()
                return RouteOutcome(json(200, w), committed: true)
            })
    }

    /// `POST /sdk/identity/clear` (docs/CONTRACT.md §1): 200 `{cleared:true}`; 404 for an unknown device.
    func handleIdentityClear(_ context: RequestContext) -> RouteOutcome {
        sdkWrite(context, bucket: .sdk, knownDevice: true) { request, deviceId in
            devices.unbind(deviceId, now: context.now)
            record(.identityClear, request, deviceId, context)
            return RouteOutcome(Self.fixedBody(#"{"cleared":true}"#), committed: true)
        }
    }

    /// `POST /sdk/events` (docs/CONTRACT.md §1): 200 `{ok:true}`; 400 for an empty name or oversized
    /// or non-flat properties; 404 for an unknown device; limited per key.
    func handleEvents(_ context: RequestContext) -> RouteOutcome {
        var eventName = ""
        var properties: [String: String] = [:]
        return sdkWrite(
            context, bucket: .events, knownDevice: true,
            read: { body in
                eventName = body.string("eventName", required: true, minLength: 1) ?? ""
                properties = body.stringMap("properties", maxBytes: Self.maxPropertiesBytes)
            },
            commit: { request, deviceId in
                devices.touch(deviceId, now: context.now)
                record(.events, request, deviceId, context, eventName: eventName, properties: properties)
                return RouteOutcome(Self.fixedBody(#"{"ok":true}"#), committed: true)
            })
    }
}
