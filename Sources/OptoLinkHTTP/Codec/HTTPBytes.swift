/// Byte-level helpers shared by the request parser, the response parser and the chunked decoder
/// (RFC 9110 tokens, RFC 9112 line and field syntax). All work on unsafe buffer views, allocate nothing.
enum HTTPBytes {
    /// Index of the CR of the next CRLF at or after `from`. The caller knows a CRLF follows.
    static func lineEnd(_ p: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
        var i = from
        while !(p[i] == .cr && p[i + 1] == .lf) { i += 1 }
        return i
    }

    /// Index of the CR of the first CRLF in `from..<to`, or `nil` when there is none yet.
    static func findCRLF(_ p: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int? {
        var i = from
        while i + 1 < to {
            if p[i] == .cr && p[i + 1] == .lf { return i }
            i += 1
        }
        return nil
    }

    static func firstIndex(of byte: UInt8, in p: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Int? {
        var i = from
        while i < to {
            if p[i] == byte { return i }
            i += 1
        }
        return nil
    }

    /// Decimal digits only (no sign, no list); values past 18 digits saturate so they trip a size limit.
    static func parseContentLength(_ value: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !value.isEmpty else { return nil }
        var result = 0
        for c in value {
            guard isDigit(c) else { return nil }
            if result > 100_000_000_000_000_000 {
                result = Int.max
                continue
            }
            result = result * 10 + Int(c - UInt8(ascii: "0"))
        }
        return result
    }

    /// Calls `body` with each non-empty, trimmed element of a comma-separated field value.
    static func forEachToken(_ value: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var s = 0
        while s < value.count {
            var e = s
            while e < value.count, value[e] != .comma { e += 1 }
            var ts = s
            var te = e
            while ts < te, value[ts] == .space || value[ts] == .tab { ts += 1 }
            while te > ts, value[te - 1] == .space || value[te - 1] == .tab { te -= 1 }
            if te > ts { body(UnsafeBufferPointer(rebasing: value[ts..<te])) }
            s = e + 1
        }
    }

    static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    /// The value of a hexadecimal digit, or `nil`.
    static func hexValue(_ c: UInt8) -> Int? {
        switch c {
        case 0x30...0x39: Int(c - 0x30)
        case 0x41...0x46: Int(c - 0x41 + 10)
        case 0x61...0x66: Int(c - 0x61 + 10)
        default: nil
        }
    }

    /// RFC 9110 `tchar`.
    static func isTokenByte(_ c: UInt8) -> Bool {
        switch c {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E: true
        default: false
        }
    }

    static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        let l = literal.utf8Start
        for i in 0..<bytes.count where bytes[i] != l[i] { return false }
        return true
    }

    /// ASCII case-insensitive comparison against a lowercase literal.
    static func equalsLowercased(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        let l = literal.utf8Start
        for i in 0..<bytes.count {
            var c = bytes[i]
            if c >= 0x41 && c <= 0x5A { c |= 0x20 }
            if c != l[i] { return false }
        }
        return true
    }

    /// One header field line `name: value` in `from..<to` (no CRLF): name and trimmed value ranges,
    /// or `nil` when malformed: an obsolete fold, no colon, an empty or non-token name (whitespace
    /// before the colon included), or a control character other than HTAB in the value.
    static func fieldLine(_ p: UnsafeBufferPointer<UInt8>, from pos: Int, to le: Int)
        -> (name: Range<Int>, value: Range<Int>)?
    {
        guard pos < le, p[pos] != .space, p[pos] != .tab else { return nil }
        guard let colon = firstIndex(of: .colon, in: p, pos, le), colon > pos else { return nil }
        for i in pos..<colon where !isTokenByte(p[i]) { return nil }
        var vs = colon + 1
        var ve = le
        while vs < ve, p[vs] == .space || p[vs] == .tab { vs += 1 }
        while ve > vs, p[ve - 1] == .space || p[ve - 1] == .tab { ve -= 1 }
        for i in vs..<ve {
            let c = p[i]
            if c < 0x20 && c != .tab || c == 0x7F { return nil }
        }
        return (pos..<colon, vs..<ve)
    }

    /// RFC 9110 §7.2 `Host = uri-host [ ":" port ]` with RFC 3986 §3.2.2 hosts: an IP literal in
    /// brackets, or a reg-name / IPv4 address of unreserved, percent-encoded and sub-delim bytes.
    /// The empty value is valid (a target URI without an authority). A comma is refused although
    /// reg-name allows it: `a, b` is what two Host field lines look like once combined (RFC 9110 §5.3).
    static func isValidHost(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        if !value.isEmpty, value[0] == UInt8(ascii: "[") {
            guard let close = firstIndex(of: UInt8(ascii: "]"), in: value, 1, value.count), close > 1 else {
                return false
            }
            for j in 1..<close where !isHostByte(value[j]) && value[j] != .colon { return false }
            i = close + 1
        } else {
            while i < value.count, value[i] != .colon {
                if value[i] == UInt8(ascii: "%") {
                    guard i + 2 < value.count, hexValue(value[i + 1]) != nil, hexValue(value[i + 2]) != nil else {
                        return false
                    }
                    i += 3
                    continue
                }
                guard isHostByte(value[i]) else { return false }
                i += 1
            }
        }
        guard i < value.count else { return true }
        guard value[i] == .colon else { return false }
        for j in (i + 1)..<value.count where !isDigit(value[j]) { return false }
        return true
    }

    /// RFC 3986 unreserved and sub-delims bytes, except the comma (see ``isValidHost(_:)``).
    private static func isHostByte(_ c: UInt8) -> Bool {
        switch c {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
        // - . _ ~ ! $ & ' ( ) * + ; =
        case 0x2D, 0x2E, 0x5F, 0x7E, 0x21, 0x24, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x2B, 0x3B, 0x3D: true
        default: false
        }
    }

    static func string(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: p[range]), as: UTF8.self)
    }
}

extension UInt8 {
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let colon = UInt8(ascii: ":")
    static let comma = UInt8(ascii: ",")
    static let dot = UInt8(ascii: ".")
    static let semicolon = UInt8(ascii: ";")
}

/// The receive buffer both parsers keep: bytes appended by the connection, consumed from `readIndex`.
struct HTTPInputBuffer: Sendable {
    private(set) var bytes: [UInt8] = []
    /// Everything before this index has been consumed.
    var readIndex = 0
    /// How far the search for the end of a head has already looked.
    var scanIndex = 0

    var unreadCount: Int { bytes.count - readIndex }

    /// Drops consumed bytes so the buffer does not grow across keep-alive messages, then appends.
    mutating func append<Bytes: Collection>(_ more: Bytes) where Bytes.Element == UInt8 {
        if readIndex == bytes.count {
            if bytes.capacity > 64 * 1024 { bytes = [] } else { bytes.removeAll(keepingCapacity: true) }
            readIndex = 0
            scanIndex = 0
        } else if readIndex >= 4096, readIndex * 2 >= bytes.count {
            bytes.removeSubrange(0..<readIndex)
            scanIndex -= readIndex
            readIndex = 0
        }
        bytes.append(contentsOf: more)
    }

    /// Where the search for the end of a head stands.
    enum HeadScan: Equatable {
        /// The index just past the CRLF CRLF that ends the head.
        case end(Int)
        /// No end yet: more bytes are needed.
        case needMore
        /// A CR not followed by LF, or an LF not preceded by CR, at this index: the head can never
        /// end well (RFC 9112 §2.2; this codec accepts CRLF only), so the message fails now instead
        /// of at its deadline. `inFirstLine`: no CRLF came before it (the start line is the bad one).
        case bareLineBreak(inFirstLine: Bool)
    }

    /// Looks for the CRLF CRLF that ends a head, from where the last search stopped.
    mutating func scanHead() -> HeadScan {
        let start = Swift.max(scanIndex, readIndex + 1)
        let readIndex = self.readIndex
        let found: HeadScan = bytes.withUnsafeBufferPointer { p in
            if readIndex < p.count, p[readIndex] == .lf {
                return .bareLineBreak(inFirstLine: true)
            }
            var i = start
            while i < p.count {
                let byte = p[i]
                if byte == .lf {
                    guard p[i - 1] == .cr else {
                        return .bareLineBreak(inFirstLine: HTTPBytes.findCRLF(p, from: readIndex, to: i) == nil)
                    }
                    if i - 3 >= readIndex, p[i - 2] == .lf, p[i - 3] == .cr { return .end(i + 1) }
                } else if p[i - 1] == .cr {
                    return .bareLineBreak(inFirstLine: HTTPBytes.findCRLF(p, from: readIndex, to: i) == nil)
                }
                i += 1
            }
            return .needMore
        }
        if found == .needMore { scanIndex = Swift.max(readIndex + 1, bytes.count) }
        return found
    }

    /// Marks everything up to `index` consumed.
    mutating func consume(to index: Int) {
        readIndex = index
        scanIndex = index
    }

    /// Takes `count` unread bytes out.
    mutating func take(_ count: Int) -> [UInt8] {
        let taken = Array(bytes[readIndex..<(readIndex + count)])
        consume(to: readIndex + count)
        return taken
    }

    /// Feeds unread bytes to a chunked decoder and consumes what it used.
    mutating func decode(_ decoder: inout ChunkedBodyDecoder) -> ChunkedBodyDecoder.Progress {
        var index = readIndex
        let progress = bytes.withUnsafeBufferPointer { decoder.decode($0, from: &index, to: $0.count) }
        consume(to: index)
        return progress
    }
}

/// The header section of a request or response: its fields plus what framing and persistence need.
struct HTTPHeadFields {
    enum Failure: Error { case malformedHeader, invalidContentLength }

    var fields: [(name: String, value: String)] = []
    /// The one `Content-Length` (equal duplicates allowed), if any.
    var contentLength: Int?
    var codings = TransferCodings()
    var connectionClose = false
    var connectionKeepAlive = false
    var expectsContinue = false
    /// How many `Host` field lines the head has, and the value range of the first one.
    var hostCount = 0
    var host: Range<Int>?

    /// Parses the field lines from `pos` up to the empty line that ends at `end`.
    static func parse(_ p: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Result<HTTPHeadFields, Failure>
    {
        var head = HTTPHeadFields()
        // One allocation for a usual head's fields instead of the array growing 1 → 2 → 4 → 8.
        head.fields.reserveCapacity(8)
        var pos = start
        while pos < end - 2 {
            let le = HTTPBytes.lineEnd(p, from: pos)
            guard let field = HTTPBytes.fieldLine(p, from: pos, to: le) else { return .failure(.malformedHeader) }
            let name = UnsafeBufferPointer(rebasing: p[field.name])
            let value = UnsafeBufferPointer(rebasing: p[field.value])
            if HTTPBytes.equalsLowercased(name, "content-length") {
                guard let length = HTTPBytes.parseContentLength(value) else { return .failure(.invalidContentLength) }
                if let previous = head.contentLength, previous != length { return .failure(.invalidContentLength) }
                head.contentLength = length
            } else if HTTPBytes.equalsLowercased(name, "transfer-encoding") {
                head.codings.add(value)
            } else if HTTPBytes.equalsLowercased(name, "expect") {
                head.expectsContinue = HTTPBytes.equalsLowercased(value, "100-continue")
            } else if HTTPBytes.equalsLowercased(name, "host") {
                head.hostCount += 1
                if head.host == nil { head.host = field.value }
            } else if HTTPBytes.equalsLowercased(name, "connection") {
                HTTPBytes.forEachToken(value) { token in
                    if HTTPBytes.equalsLowercased(token, "close") { head.connectionClose = true }
                    if HTTPBytes.equalsLowercased(token, "keep-alive") { head.connectionKeepAlive = true }
                }
            }
            head.fields.append((name: HTTPBytes.string(p, field.name), value: HTTPBytes.string(p, field.value)))
            pos = le + 2
        }
        return .success(head)
    }
}

/// Every `Transfer-Encoding` value of one message, judged as a whole (RFC 9112 §6.1, §7).
struct TransferCodings {
    enum Verdict { case chunkedOnly, malformed, unsupported }
    private(set) var present = false
    private var chunkedCount = 0
    private var chunkedLast = false
    private var others = 0

    /// Adds one field value's comma-separated codings (parameters make a coding unknown).
    mutating func add(_ value: UnsafeBufferPointer<UInt8>) {
        present = true
        var sawAny = false
        HTTPBytes.forEachToken(value) { token in
            sawAny = true
            if HTTPBytes.equalsLowercased(token, "chunked") {
                chunkedCount += 1
                chunkedLast = true
            } else {
                others += 1
                chunkedLast = false
            }
        }
        if !sawAny { others += 1 }  // an empty value is not a coding we know
    }

    /// `chunked` exactly once and last, and nothing else → decodable; `chunked` twice or not last →
    /// the length is undeterminable (400); otherwise a coding this codec does not implement (501).
    var verdict: Verdict {
        if chunkedCount > 1 || (chunkedCount == 1 && !chunkedLast) { return .malformed }
        if chunkedCount == 1 && others == 0 { return .chunkedOnly }
        return .unsupported
    }
}
