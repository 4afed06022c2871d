/// Decodes a `Transfer-Encoding: chunked` body incrementally (RFC 9112 §7.1), for requests and responses.
///
/// The owner keeps the byte buffer; ``decode(_:from:to:)`` consumes what it can from it and says
/// whether the body is complete, needs more bytes, or is malformed. Strict where framing is at
/// stake: the size is hexadecimal digits only (no sign, no `0x`, at most 15 digits), a chunk
/// extension must start with `;` (optional whitespace before it) and hold no control characters,
/// every line ends in CRLF (a bare LF or CR is an error), and chunk data must be followed by CRLF.
/// Trailer fields are parsed like header fields and kept; their total size is bounded.
struct ChunkedBodyDecoder: Sendable {
    /// Why a chunked body cannot be decoded.
    enum Failure: Error, Sendable, Equatable {
        /// A size line, chunk terminator or trailer line breaks the syntax.
        case malformed
        /// The decoded body would exceed the body limit.
        case bodyTooLarge
        /// The trailer section exceeds the header limit.
        case trailersTooLarge
    }

    /// What one call to ``decode(_:from:to:)`` reached.
    enum Progress: Sendable, Equatable {
        case needMore
        case done
        case failed(Failure)
    }

    private enum State: Sendable {
        case sizeLine
        case data(remaining: Int)
        case dataEnd
        case trailers
        case done
    }

    /// The body decoded so far.
    private(set) var body: [UInt8] = []
    /// Trailer fields, in order, once the last chunk has been read.
    private(set) var trailers: [(name: String, value: String)] = []
    private var state = State.sizeLine
    private var trailerBytes = 0
    let maxBodyBytes: Int
    let maxTrailerBytes: Int
    /// Longest size line accepted (digits plus extensions), in bytes.
    private static let maxSizeLine = 4096

    init(maxBodyBytes: Int, maxTrailerBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
        self.maxTrailerBytes = maxTrailerBytes
    }

    /// `true` once the terminating empty line after the last chunk (and its trailers) was read.
    var isDone: Bool {
        if case .done = state { return true }
        return false
    }

    /// Consumes bytes `index..<end` of `p`, advancing `index` past what it used.
    mutating func decode(_ p: UnsafeBufferPointer<UInt8>, from index: inout Int, to end: Int) -> Progress {
        while true {
            switch state {
            case .done:
                return .done
            case .sizeLine:
                guard let le = HTTPBytes.findCRLF(p, from: index, to: end) else {
                    if hasBareLineBreak(p, index, end) { return .failed(.malformed) }
                    return end - index > Self.maxSizeLine ? .failed(.malformed) : .needMore
                }
                guard let size = Self.chunkSize(p, index, le) else { return .failed(.malformed) }
                index = le + 2
                if size == 0 {
                    state = .trailers
                } else {
                    guard size <= maxBodyBytes - body.count else { return .failed(.bodyTooLarge) }
                    body.reserveCapacity(body.count + size)
                    state = .data(remaining: size)
                }
            case .data(let remaining):
                let take = Swift.min(remaining, end - index)
                if take > 0 {
                    body.append(contentsOf: UnsafeBufferPointer(rebasing: p[index..<(index + take)]))
                    index += take
                }
                if take < remaining {
                    state = .data(remaining: remaining - take)
                    return .needMore
                }
                state = .dataEnd
            case .dataEnd:
                guard end - index >= 2 else {
                    if end - index == 1, p[index] != .cr { return .failed(.malformed) }
                    return .needMore
                }
                guard p[index] == .cr, p[index + 1] == .lf else { return .failed(.malformed) }
                index += 2
                state = .sizeLine
            case .trailers:
                guard let le = HTTPBytes.findCRLF(p, from: index, to: end) else {
                    if hasBareLineBreak(p, index, end) { return .failed(.malformed) }
                    return trailerBytes + (end - index) > maxTrailerBytes ? .failed(.trailersTooLarge) : .needMore
                }
                trailerBytes += le + 2 - index
                if trailerBytes > maxTrailerBytes { return .failed(.trailersTooLarge) }
                if le == index {
                    index += 2
                    state = .done
                    return .done
                }
                guard let field = HTTPBytes.fieldLine(p, from: index, to: le) else { return .failed(.malformed) }
                trailers.append((name: HTTPBytes.string(p, field.name), value: HTTPBytes.string(p, field.value)))
                index = le + 2
            }
        }
    }

    /// A LF not preceded by CR, or a CR not followed by LF, in `from..<to` (the last byte may be a lone CR).
    private func hasBareLineBreak(_ p: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Bool {
        var i = from
        while i < to {
            if p[i] == .lf { return true }
            if p[i] == .cr, i + 1 < to, p[i + 1] != .lf { return true }
            i += 1
        }
        return false
    }

    /// `chunk-size [ BWS ";" chunk-ext ]` in `from..<to`; `nil` when malformed or over 15 hex digits.
    private static func chunkSize(_ p: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Int? {
        var i = from
        var size = 0
        while i < to, let digit = HTTPBytes.hexValue(p[i]) {
            guard i - from < 15 else { return nil }
            size = size << 4 | digit
            i += 1
        }
        guard i > from else { return nil }
        if i == to { return size }
        while i < to, p[i] == .space || p[i] == .tab { i += 1 }
        guard i < to, p[i] == .semicolon else { return nil }
        for j in i..<to where p[j] < 0x20 && p[j] != .tab || p[j] == 0x7F { return nil }
        return size
    }
}
