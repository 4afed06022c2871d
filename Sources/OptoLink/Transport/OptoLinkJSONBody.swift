import Foundation

/// Writes the SDK's request bodies (docs/CONTRACT.md §1: compact JSON objects, keys sorted, no `null`s)
/// without going through `JSONSerialization`, whose sorted-keys path costs a locale-aware
/// string comparison per key pair and boxes every value.
///
/// Only the shapes the SDK sends take the fast path: objects whose keys are ASCII letters and
/// `_` (no two equal ignoring case) with `String`, `[String: String]` or nested object values,
/// and strings without control characters. The output is byte-identical to
/// `JSONSerialization.data(withJSONObject:options: [.sortedKeys])` for those shapes (keys
/// ordered case-insensitively, `/` escaped as `\/`, non-ASCII left as UTF-8); anything else
/// returns `nil` so the caller falls back to `JSONSerialization`.
/// `package`, not `public`: this package's tests compare it with `JSONSerialization`; apps never see it.
package enum OptoLinkJSONBody {
    /// The UTF-8 JSON text of `object`, or `nil` when it is not a fast-path shape.
    package static func encode(_ object: [String: Any]) -> Data? {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        guard write(object, into: &out) else { return nil }
        return Data(out)
    }

    /// The body of `POST /sdk/events`, `{"deviceId":…,"eventName":…,"properties":{…}}`, written
    /// without building the `[String: Any]` object first (its keys are fixed and already in
    /// order): the same bytes as ``encode(_:)`` of that object, and `nil` exactly when it is `nil`.
    package static func encodeEvent(deviceId: String, eventName: String, properties: [String: String]) -> Data? {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        out.append(contentsOf: #"{"deviceId":"#.utf8)
        guard writeString(deviceId, into: &out) else { return nil }
        out.append(contentsOf: #","eventName":"#.utf8)
        guard writeString(eventName, into: &out) else { return nil }
        out.append(contentsOf: #","properties":"#.utf8)
        guard write(properties, into: &out) else { return nil }
        out.append(UInt8(ascii: "}"))
        return Data(out)
    }

    private static func write(_ object: [String: Any], into out: inout [UInt8]) -> Bool {
        out.append(UInt8(ascii: "{"))
        var first = true
        let ok = forEachSorted(object) { key, value in
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            guard writeString(key, into: &out) else { return false }
            out.append(UInt8(ascii: ":"))
            switch value {
            case let value as String: return writeString(value, into: &out)
            case let value as [String: String]: return write(value, into: &out)
            case let value as [String: Any]: return write(value, into: &out)
            default: return false
            }
        }
        out.append(UInt8(ascii: "}"))
        return ok
    }

    private static func write(_ object: [String: String], into out: inout [UInt8]) -> Bool {
        out.append(UInt8(ascii: "{"))
        var first = true
        let ok = forEachSorted(object) { key, value in
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            guard writeString(key, into: &out) else { return false }
            out.append(UInt8(ascii: ":"))
            return writeString(value, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return ok
    }

    /// Calls `member` with each member in `JSONSerialization`'s sorted order while it returns
    /// `true`; `false` when it returned `false`, a key is outside `[A-Za-z_]` or two keys are equal
    /// ignoring case (their order would then depend on a tie-break rule).
    ///
    /// The order is an insertion sort of the members' indices in a temporary buffer (on the stack
    /// for the SDK's few members): no array of members per object and per request.
    private static func forEachSorted<Value>(
        _ object: [String: Value], _ member: (String, Value) -> Bool
    ) -> Bool {
        for key in object.keys {
            guard !key.isEmpty, key.utf8.allSatisfy(isKeyByte) else { return false }
        }
        return withUnsafeTemporaryAllocation(of: Dictionary<String, Value>.Index.self, capacity: object.count) {
            order in
            guard let base = order.baseAddress else { return true }  // an empty object
            order.initialize(repeating: object.startIndex)
            defer { base.deinitialize(count: order.count) }
            var count = 0
            for index in object.indices {
                let key = object[index].key
                var slot = count
                while slot > 0 {
                    let comparison = foldedOrder(object[order[slot - 1]].key, key)
                    if comparison == 0 { return false }
                    if comparison < 0 { break }
                    order[slot] = order[slot - 1]
                    slot -= 1
                }
                order[slot] = index
                count += 1
            }
            for position in 0..<count {
                let (key, value) = object[order[position]]
                guard member(key, value) else { return false }
            }
            return true
        }
    }

    private static func isKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"): true
        default: false
        }
    }

    /// Compares two keys of `[A-Za-z_]` with letters folded to lower case: negative, zero or positive.
    private static func foldedOrder(_ a: String, _ b: String) -> Int {
        var left = a.utf8.makeIterator()
        var right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?):
                let foldedX = x >= UInt8(ascii: "A") && x <= UInt8(ascii: "Z") ? x + 32 : x
                let foldedY = y >= UInt8(ascii: "A") && y <= UInt8(ascii: "Z") ? y + 32 : y
                if foldedX != foldedY { return foldedX < foldedY ? -1 : 1 }
            }
        }
    }

    /// Appends `text` as a JSON string; `false` for control characters (left to the fallback).
    /// A string with nothing to escape (the usual case) is copied in one piece.
    private static func writeString(_ text: String, into out: inout [UInt8]) -> Bool {
        out.append(UInt8(ascii: "\""))
        let utf8 = text.utf8
        if !text.anyUTF8Byte(where: needsEscape) {
            out.appendUTF8(of: text)
            out.append(UInt8(ascii: "\""))
            return true
        }
        for byte in utf8 {
            switch byte {
            case 0x00..<0x20: return false
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return true
    }

    /// Whether `byte` is escaped or refused by ``writeString(_:into:)``.
    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "/")
    }
}
