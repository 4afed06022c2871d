import Foundation

/// Reads `properties.opl_corr` out of an events body without `JSONSerialization` (which boxes
/// every value, and on Linux cost more per attempt than the rest of the recording).
///
/// It reads only the shape the SDK sends: an ASCII JSON object whose values are strings or
/// objects of strings, with the escapes `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`. For
/// anything else (a number, an array, a literal, a `\u` escape, a non-ASCII byte, a repeated
/// key that matters, broken syntax) it answers ``Outcome/unsure`` and the caller parses the
/// body with `JSONSerialization`, so both always agree.
package enum CorrelationScanner {
    package enum Outcome: Equatable {
        /// The body is a JSON object in the fast-path shape; `properties.opl_corr` (a string) or `nil`.
        case found(String?)
        /// Not the fast-path shape: parse it in full.
        case unsure
    }

    private struct Unsure: Error {}

    /// Scans `body`.
    package static func scan(_ body: Data) -> Outcome {
        body.withUnsafeBytes { raw in
            var cursor = Cursor(bytes: raw.bindMemory(to: UInt8.self))
            do {
                let value = try cursor.topLevel()
                return .found(value)
            } catch {
                return .unsure
            }
        }
    }

    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// Objects open at the cursor; deeper than ``maxDepth`` is left to `JSONSerialization`.
        var depth = 0
        static let maxDepth = 16

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        /// The whole document: one object, then only whitespace.
        mutating func topLevel() throws(Unsure) -> String? {
            for byte in bytes where byte >= 0x80 { throw Unsure() }
            skipSpace()
            var found: String?
            var sawProperties = false
            try object { (cursor: inout Cursor, key: UnsafeBufferPointer<UInt8>?) throws(Unsure) in
                if key?.elementsEqual("properties".utf8) == true {
                    guard !sawProperties else { throw Unsure() }
                    sawProperties = true
                    found = try cursor.properties()
                } else {
                    try cursor.skipValue()
                }
            }
            skipSpace()
            guard index == bytes.count else { throw Unsure() }
            return found
        }

        /// The `properties` value: `opl_corr` when it is an object holding that string key.
        mutating func properties() throws(Unsure) -> String? {
            guard peek() == UInt8(ascii: "{") else {
                try skipValue()
                return nil
            }
            var found: String?
            var sawKey = false
            try object { (cursor: inout Cursor, key: UnsafeBufferPointer<UInt8>?) throws(Unsure) in
                guard key?.elementsEqual("opl_corr".utf8) == true else {
                    try cursor.skipValue()
                    return
                }
                guard !sawKey else { throw Unsure() }
                sawKey = true
                if cursor.peek() == UInt8(ascii: "\"") {
                    let start = cursor.index
                    if let raw = try cursor.rawString() {
                        found = String(decoding: raw, as: UTF8.self)
                    } else {
                        cursor.index = start  // the value has escapes: read it again, decoded
                        found = String(decoding: try cursor.decoded(), as: UTF8.self)
                    }
                } else {
                    try cursor.skipValue()
                }
            }
            return found
        }

        /// `{ "key": value, … }`, calling `member` positioned at each value with the key's bytes
        /// (`nil` for a key with escapes: the escapes give none of the characters of the keys looked
        /// for, so such a key is never one of them).
        mutating func object(_ member: (inout Cursor, UnsafeBufferPointer<UInt8>?) throws(Unsure) -> Void)
            throws(Unsure)
        {
            try expect(UInt8(ascii: "{"))
            depth += 1
            guard depth <= Self.maxDepth else { throw Unsure() }
            defer { depth -= 1 }
            skipSpace()
            if peek() == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                skipSpace()
                let key = try rawString()
                skipSpace()
                try expect(UInt8(ascii: ":"))
                skipSpace()
                try member(&self, key)
                skipSpace()
                guard let next = peek() else { throw Unsure() }
                index += 1
                if next == UInt8(ascii: "}") { return }
                guard next == UInt8(ascii: ",") else { throw Unsure() }
            }
        }

        /// A string or an object of the fast-path shape, skipped.
        mutating func skipValue() throws(Unsure) {
            switch peek() {
            case UInt8(ascii: "\""): _ = try rawString()
            case UInt8(ascii: "{"):
                try object { (cursor: inout Cursor, _: UnsafeBufferPointer<UInt8>?) throws(Unsure) in
                    try cursor.skipValue()
                }
            default: throw Unsure()
            }
        }

        /// A string without escapes as its bytes in the body (no copy: keys and skipped values are
        /// most of a body's strings); `nil` for a string with escapes, read and checked by
        /// ``decoded()``. Either way the cursor ends past the string.
        mutating func rawString() throws(Unsure) -> UnsafeBufferPointer<UInt8>? {
            let start = index
            try expect(UInt8(ascii: "\""))
            var end = index
            while end < bytes.count, bytes[end] != UInt8(ascii: "\""), bytes[end] != UInt8(ascii: "\\"),
                bytes[end] >= 0x20
            {
                end += 1
            }
            if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
                defer { index = end + 1 }
                return UnsafeBufferPointer(rebasing: bytes[index..<end])
            }
            index = start
            _ = try decoded()
            return nil
        }

        /// A string's bytes with its escapes decoded, read byte by byte (``rawString()`` takes the
        /// strings without escapes in one slice).
        mutating func decoded() throws(Unsure) -> [UInt8] {
            try expect(UInt8(ascii: "\""))
            var out: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return out
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { throw Unsure() }
                    let escaped = bytes[index]
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    default: throw Unsure()
                    }
                case 0x00..<0x20: throw Unsure()
                default: out.append(byte)
                }
            }
            throw Unsure()
        }

        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func expect(_ byte: UInt8) throws(Unsure) {
            guard peek() == byte else { throw Unsure() }
            index += 1
        }

        mutating func skipSpace() {
            while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }
    }
}
