import Foundation

/// The shape of each endpoint's success body in the wire contract (docs/CONTRACT.md §1): its
/// required keys and their JSON types. A body that does not fit is `off_contract`.
///
/// | Endpoint | Required (type) |
/// |---|---|
/// | `/match` | `matched` (bool), `matchMethod` (string); a hit also `matchConfidence`, `linkId`, `path` (strings) |
/// | `/data` | `linkId`, `path` (strings) |
/// | `/sdk/session` | `ok` (true), `deviceId`, `firstSeenAt`, `lastSeenAt` (strings) |
/// | `/sdk/identity` | `endUserId` (string), `rebound` (bool) |
/// | `/sdk/identity/clear` | `cleared` (bool) |
/// | `/sdk/events` | `ok` (true) |
///
/// `params`, where present, is an object or `null`; `matchScore`, where present, a number.
/// Keys the contract does not name are allowed (a newer backend may add some).
package enum ContractBodyShape {
    /// Whether `body` (already known to be `{…}`) fits `endpoint`'s success shape. The bodies the
    /// contract fixes byte for byte (`{"ok":true}`, `{"cleared":true}`) are compared, not parsed:
    /// events are most of a run's attempts.
    package static func fits(_ endpoint: ContractEndpoint, body: Data) -> Bool {
        if endpoint == .events, body.elementsEqual(okBody) { return true }
        if endpoint == .identityClear, body.elementsEqual(clearedBody) { return true }
        guard let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] else { return false }
        func string(_ key: String) -> Bool { object[key] is String }
        func bool(_ key: String) -> Bool { isBool(object[key]) }
        func isTrue(_ key: String) -> Bool { bool(key) && (object[key] as? Bool) == true }
        let paramsFit = object["params"].map { $0 is NSNull || $0 is [String: Any] } ?? true
        switch endpoint {
        case .match:
            guard bool("matched"), string("matchMethod") else { return false }
            let scoreFits = object["matchScore"].map { isNumber($0) } ?? true
            guard (object["matched"] as? Bool) == true else { return true }
            return string("matchConfidence") && string("linkId") && string("path") && paramsFit && scoreFits
        case .data: return string("linkId") && string("path") && paramsFit
        case .session: return isTrue("ok") && string("deviceId") && string("firstSeenAt") && string("lastSeenAt")
        case .identity: return string("endUserId") && bool("rebound")
        case .identityClear: return bool("cleared")
        case .events: return isTrue("ok")
        }
    }

    /// The first 512 bytes of `body` as text (invalid UTF-8 replaced), with `…` when cut, for the
    /// report to show what the server answered.
    package static func excerpt(_ body: Data) -> String {
        let limit = 512
        let text = String(decoding: body.prefix(limit), as: UTF8.self)
        return body.count > limit ? text + "…" : text
    }

    private static let okBody = Data(#"{"ok":true}"#.utf8)
    private static let clearedBody = Data(#"{"cleared":true}"#.utf8)

    /// A JSON `true`/`false`, not a number: `JSONSerialization` hands out both as `NSNumber`, and
    /// `1 is Bool` holds, but only a boolean has the `char` type code `c` (numbers are `i`, `q`, `d`).
    private static func isBool(_ value: Any?) -> Bool {
        guard let number = value as? NSNumber else { return false }
        return number.objCType.pointee == CChar(UInt8(ascii: "c"))
    }

    private static func isNumber(_ value: Any) -> Bool { value is NSNumber && !isBool(value) }
}
