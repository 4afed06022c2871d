import Foundation

/// The `/match` wire shapes (docs/CONTRACT.md §1): the request body and the hit/miss response.
enum DeferredMatchWire {
    /// The body: `platform`, `osVersion`, `deviceModel`, `language`, `deviceId`, and
    /// `clipboardToken` only when one was collected. No `timezone`, no `null`s.
    static func body(deviceId: String, deviceInfo: OptoLinkDeviceInfo, clipboardToken: String?) -> [String: String] {
        var body = [
            "platform": deviceInfo.platform,
            "osVersion": deviceInfo.osVersion,
            "deviceModel": deviceInfo.deviceModel,
            "language": deviceInfo.language,
            "deviceId": deviceId,
        ]
        if let clipboardToken { body["clipboardToken"] = clipboardToken }
        return body
    }

    /// Decodes a 2xx `/match` body: `nil` for a miss, a deferred ``OptoLinkData`` for a hit.
    ///
    /// Enums decode case-insensitively (unknown method → `.none`, unknown confidence →
    /// `.medium`); `matchScore` is kept only for `FINGERPRINT_SCORED`.
    /// - Throws: ``OptoLinkConnectionError`` (`URLError(.cannotParseResponse)`) when the body is
    ///   not a `/match` object: the contract's "network failure during the deferred match" (the
    ///   response did not arrive as a match result), not an API error, whose status would be a 2xx.
    static func decode(body: Data) throws(OptoLinkConnectionError) -> OptoLinkData? {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
            let matched = object["matched"] as? Bool
        else {
            throw OptoLinkConnectionError(underlying: URLError(.cannotParseResponse))
        }
        guard matched else { return nil }
        let method = (object["matchMethod"] as? String).map(MatchMethod.init(wireValue:)) ?? .none
        let confidence = (object["matchConfidence"] as? String).map(MatchConfidence.init(wireValue:)) ?? .medium
        let score = method == .fingerprintScored ? (object["matchScore"] as? NSNumber)?.intValue : nil
        return OptoLinkData(
            linkId: object["linkId"] as? String,
            path: object["path"] as? String ?? "",
            params: flatParams(object["params"]),
            matchMethod: method,
            confidence: confidence,
            isDeferred: true,
            score: score)
    }

    /// A flat string map from a JSON value; `nil` for `null`/absent; non-string scalars are
    /// rendered as text.
    static func flatParams(_ value: Any?) -> [String: String]? {
        guard let dictionary = value as? [String: Any] else { return nil }
        var params: [String: String] = [:]
        for (key, value) in dictionary {
            switch value {
            case let text as String: params[key] = text
            case let number as NSNumber: params[key] = number.stringValue
            default: continue
            }
        }
        return params
    }
}
