import Foundation

/// Runs one deferred match (docs/CONTRACT.md §2, "Deferred match"): collects the clipboard leg
/// (when enabled) and the fingerprint, sends one `POST /match`, clears the clipboard only
/// on a hit. The first-launch flag and the session fallback belong to the caller.
struct DeferredMatcher: Sendable {
    let api: OptoLinkAPIClient
    let pasteboard: any OptoLinkPasteboard
    let deviceInfo: OptoLinkDeviceInfo
    let deviceId: String
    let clipboardEnabled: Bool
    let log: OptoLinkLog

    /// - Returns: the deferred link, or `nil` on a miss.
    /// - Throws: ``OptoLinkApiError`` / ``OptoLinkConnectionError`` once the repeat-safe
    ///   budget is spent or on a non-retryable status; ``OptoLinkConnectionError``
    ///   (`.cannotParseResponse`) for a 2xx whose body is not a match result (not retried: the
    ///   backend may have consumed the click).
    func run(scope: OptoLinkCallScope? = nil) async throws -> OptoLinkData? {
        var token: String?
        if clipboardEnabled {
            token = pasteboard.string().flatMap(ClipboardToken.extract(from:))
            log.info("match: clipboard leg \(token == nil ? "found no click token" : "collected a click token")")
        } else {
            log.info("match: clipboard leg disabled by config")
        }
        log.info(
            "match: fingerprint leg platform=\(deviceInfo.platform) osVersion=\(deviceInfo.osVersion) "
                + "deviceModel=\(deviceInfo.deviceModel) language=\(deviceInfo.language)")
        let body = DeferredMatchWire.body(deviceId: deviceId, deviceInfo: deviceInfo, clipboardToken: token)
        let response = try await api.post(.match, body: body, scope: scope)
        let result: OptoLinkData?
        do {
            result = try DeferredMatchWire.decode(body: response.body)
        } catch {
            log.info(
                "match: the \(response.status) response's body (\(response.body.count) bytes) is not a match "
                    + "result; treated as a network failure")
            throw error
        }
        if let result {
            log.info("match: hit \(result.matchMethod.rawValue) confidence \(result.confidence.rawValue)")
            if token != nil { pasteboard.clear() }
        } else {
            log.info("match: miss")
        }
        return result
    }
}
