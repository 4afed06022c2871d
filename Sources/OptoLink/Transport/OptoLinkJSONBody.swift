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
enum OptoLinkJSONBody {
    /// The UTF-8 JSON text of `object`, or `nil` when it is not a fast-path shape.
    static func encode(_ object: [String: Any]) -> Data? {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        guard write(object, into: &out) else { return nil }
        return Data(out)
    }

    private static func write(_ object: [String: Any], into out: inout [UInt8]) -> Bool {
        guard let members = sortedMembers(object) else { return false }
        out.append(UInt8(ascii: "{"))
        for (index, member) in members.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            guard writeString(member.key, into: &out) else { return false }
            out.append(UInt8(ascii: ":"))
            switch member.value {
            case let value as String:
                guard writeString(value, into: &out) else { return false }
            case let value as [String: String]:
                guard write(value, into: &out) else { return false }
            case let value as [String: Any]:
                guard write(value, into: &out) else { return false }
            default:
                return false
            }
        }
        out.append(UInt8(ascii: "}"))
        return true
    }

    private static func write(_ object: [String: String], into out: inout [UInt8]) -> Bool {
        guard let members = sortedMembers(object) else { return false }
        out.append(UInt8(ascii: "{"))
        for (index, member) in members.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            guard writeString(member.key, into: &out) else { return false }
            out.append(UInt8(ascii: ":"))
            guard writeString(member.value, into: &out) else { return false }
        }
        out.append(UInt8(ascii: "}"))
        return true
    }

    /// The members in `JSONSerialization`'s sorted order, or `nil` when a key is outside
    /// `[A-Za-z_]` or two keys are equal ignoring case (their order then depends on a tie-break rule).
    private static func sortedMembers<Value>(_ object: [String: Value]) -> [(key: String, value: Value)]? {
        for key in object.keys {
            guard !key.isEmpty, key.utf8.allSatisfy(isKeyByte) else { return nil }
        }
        let members = object.sorted { foldedOrder($0.key, $1.key) < 0 }
        for index in members.indices.dropFirst() where foldedOrder(members[index - 1].key, members[index].key) == 0 {
            return nil
        }
        return members
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
