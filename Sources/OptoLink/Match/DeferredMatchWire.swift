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
    /// - Throws: ``OptoLinkApiError`` with the response status and raw body when the body
    ///   is not a `/match` object.
    static func decode(status: Int, body: Data) throws(OptoLinkApiError) -> OptoLinkData? {
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any],
            let matched = object["matched"] as? Bool
        else {
            throw OptoLinkApiError(
                status: status, raw: String(decoding: body, as: UTF8.self),
                message: "OptoLink /match returned a body that is not a match result")
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
