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
        guard let keys = sortedKeys(object.keys) else { return false }
        out.append(UInt8(ascii: "{"))
        for (index, key) in keys.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            guard writeString(key, into: &out) else { return false }
            out.append(UInt8(ascii: ":"))
            switch object[key] {
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
        guard let keys = sortedKeys(object.keys) else { return false }
        out.append(UInt8(ascii: "{"))
        for (index, key) in keys.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            guard writeString(key, into: &out), let value = object[key] else { return false }
            out.append(UInt8(ascii: ":"))
            guard writeString(value, into: &out) else { return false }
        }
        out.append(UInt8(ascii: "}"))
        return true
    }

    /// Keys in `JSONSerialization`'s sorted order, or `nil` when a key is outside `[A-Za-z_]`
    /// or two keys are equal ignoring case (their order then depends on a tie-break rule).
    private static func sortedKeys<Keys: Collection<String>>(_ keys: Keys) -> [String]? {
        var folded: [(key: String, lower: [UInt8])] = []
        folded.reserveCapacity(keys.count)
        for key in keys {
            guard !key.isEmpty else { return nil }
            var lower: [UInt8] = []
            lower.reserveCapacity(key.utf8.count)
            for byte in key.utf8 {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "_"): lower.append(byte)
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): lower.append(byte + 32)
                default: return nil
                }
            }
            folded.append((key, lower))
        }
        folded.sort { $0.lower.lexicographicallyPrecedes($1.lower) }
        for index in folded.indices.dropFirst() where folded[index].lower == folded[index - 1].lower {
            return nil
        }
        return folded.map(\.key)
    }

    /// Appends `text` as a JSON string; `false` for control characters (left to the fallback).
    private static func writeString(_ text: String, into out: inout [UInt8]) -> Bool {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
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
}
