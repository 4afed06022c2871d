import OptoLinkHTTP
import SoakSupport
import Testing

/// The client side of the codec: responses in every framing, cut at every byte and at seeded random places.
@Suite(.timeLimit(.minutes(1)))
struct HTTPResponseParserTests {
    /// Feeds `chunks`, arming the parser for one response per entry of `heads` (`true`: a HEAD request),
    /// and collects every output; `finish` delivers end of input after the last chunk.
    private func parse(
        _ chunks: [[UInt8]], heads: [Bool], finish: Bool = false, limits: HTTPResponseParser.Limits = .init()
    ) -> [HTTPResponseParser.Output] {
        var parser = HTTPResponseParser(limits: limits)
        var outputs: [HTTPResponseParser.Output] = []
        var armed = 0
        func arm() {
            if armed < heads.count {
                parser.expectResponse(toHEAD: heads[armed])
                armed += 1
            }
        }
        arm()
        func drain() -> Bool {
            while let output = parser.next() {
                outputs.append(output)
                switch output {
                case .failure: return false
                case .response: arm()
                case .informational: break
                }
            }
            return true
        }
        for chunk in chunks {
            parser.append(chunk)
            if !drain() { return outputs }
        }
        if finish, let last = parser.finish() { outputs.append(last) }
        return outputs
    }

    private func parse(_ text: String, heads: [Bool] = [false], finish: Bool = false) -> [HTTPResponseParser.Output] {
        parse([Array(text.utf8)], heads: heads, finish: finish)
    }

    private func bytewise(_ text: String, heads: [Bool], finish: Bool = false) -> [HTTPResponseParser.Output] {
        parse(Array(text.utf8).map { [$0] }, heads: heads, finish: finish)
    }

    /// One of each framing, back to back on one keep-alive connection.
    private static let stream =
        "HTTP/1.1 100 Continue\r\n\r\n"
        + "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"ok\":true}\r\n"
        + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nWiki\r\n5\r\npedia\r\n0\r\nX-Sum: 9\r\nX-B: b\r\n\r\n"
        + "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"  // answer to a HEAD: no body follows
        + "HTTP/1.1 204 No Content\r\n\r\n"
        + "HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n"
        + "HTTP/1.1 429 Too Many Requests\r\nContent-Length: 2\r\n\r\n{}"
    private static let heads = [false, false, true, false, false, false]

    private func summary(_ outputs: [HTTPResponseParser.Output]) -> [String] {
        outputs.map { output in
            switch output {
            case .informational(let status, _): "\(status)"
            case .response(let r, let keepAlive):
                "\(r.status) \(String(decoding: r.body, as: UTF8.self)) \(r.trailers.fields.map(\.name)) \(keepAlive)"
            case .failure(let error): "\(error)"
            }
        }
    }

    @Test func everyFramingOnOneConnection() {
        #expect(
            summary(parse(Self.stream, heads: Self.heads)) == [
                "100", "201 {\"ok\":true}\r\n [] true", "200 Wikipedia [\"X-Sum\", \"X-B\"] true", "200  [] true",
                "204  [] true", "304  [] true", "429 {} [] true",
            ])
    }

    @Test func cutAtEveryByteGivesTheSameResponses() {
        let whole = parse(Self.stream, heads: Self.heads)
        #expect(bytewise(Self.stream, heads: Self.heads) == whole)
        // Every single split point of the stream into two reads.
        let bytes = Array(Self.stream.utf8)
        for cut in 1..<bytes.count {
            let split = parse([Array(bytes[..<cut]), Array(bytes[cut...])], heads: Self.heads)
            #expect(split == whole, "cut at \(cut)")
            if split != whole { break }
        }
    }

    @Test func seededRandomCutsParseAlike() {
        var random = SplitMix64(seed: 11)
        var text = ""
        var heads: [Bool] = []
        var expected: [String] = []
        for i in 0..<150 {
            let body = String(repeating: "r", count: Int.random(in: 0..<40, using: &random))
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                text += "HTTP/1.1 200 OK\r\nX-N: \(i)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            case 1:
                let half = body.utf8.count / 2
                let first = String(body.prefix(half))
                let second = String(body.dropFirst(half))
                text += "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                if !first.isEmpty { text += String(first.utf8.count, radix: 16) + "\r\n\(first)\r\n" }
                if !second.isEmpty { text += String(second.utf8.count, radix: 16) + "\r\n\(second)\r\n" }
                text += "0\r\nX-N: \(i)\r\n\r\n"
            default:
                text +=
                    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                expected.append("100")
            }
            heads.append(false)
            expected.append("200 \(body.utf8.count)")
        }
        let bytes = Array(text.utf8)
        for _ in 0..<20 {
            var chunks: [[UInt8]] = []
            var offset = 0
            while offset < bytes.count {
                let step = min(bytes.count - offset, Int.random(in: 1...200, using: &random))
                chunks.append(Array(bytes[offset..<(offset + step)]))
                offset += step
            }
            let got = parse(chunks, heads: heads).map { output -> String in
                switch output {
                case .informational(let status, _): "\(status)"
                case .response(let r, _): "\(r.status) \(r.body.count)"
                case .failure(let error): "\(error)"
                }
            }
            #expect(got == expected)
        }
    }

    @Test func randomBytesNeverTrap() {
        var random = SplitMix64(seed: 99)
        let tokens: [[UInt8]] = [
            "HTTP/1.1 ", "HTTP/1.0 ", "200", "100", "204", " OK", "\r\n", "\r\n\r\n", "\n", ":", "Content-Length: ",
            "12", "-1", "Transfer-Encoding: chunked", "Connection: close", "0\r\n", "a;b\r\n", "\t", "\0",
        ].map { Array($0.utf8) }
        var failures = 0
        var responses = 0
        for _ in 0..<3000 {
            var bytes: [UInt8] =
                Bool.random(using: &random) ? Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8) : []
            for _ in 0..<Int.random(in: 0..<120, using: &random) {
                if Int.random(in: 0..<4, using: &random) == 0 {
                    bytes.append(UInt8.random(in: 0...255, using: &random))
                } else {
                    bytes += tokens[Int.random(in: 0..<tokens.count, using: &random)]
                }
            }
            var chunks: [[UInt8]] = []
            var offset = 0
            while offset < bytes.count {
                let step = min(bytes.count - offset, Int.random(in: 1...40, using: &random))
                chunks.append(Array(bytes[offset..<(offset + step)]))
                offset += step
            }
            let outputs = parse(
                chunks, heads: Array(repeating: false, count: 50), finish: true,
                limits: .init(maxHeaderBytes: 512, maxBodyBytes: 64))
            if case .failure = outputs.last { failures += 1 }
            responses += outputs.filter { if case .response = $0 { true } else { false } }.count
        }
        #expect(failures > 100)
        #expect(responses > 1000)
    }

    @Test func bodyUntilCloseEndsAtEndOfInput() {
        let text = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it"
        #expect(parse(text) == [])
        #expect(summary(parse(text, finish: true)) == ["200 all of it [] false"])
        #expect(summary(bytewise(text, heads: [false], finish: true)) == ["200 all of it [] false"])
    }

    @Test func persistenceFollowsVersionAndConnection() {
        #expect(
            summary(parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")) == ["200  [] false"])
        #expect(summary(parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")) == ["200  [] false"])
        #expect(
            summary(parse("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n")) == ["200  [] true"]
        )
        // Both framings: chunked wins and the connection is not reused.
        #expect(
            summary(
                parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n"))
                == ["200 x [] false"])
        #expect(summary(parse("HTTP/1.1 200\r\nContent-Length: 1\r\n\r\nz")) == ["200 z [] true"])  // no reason phrase
    }

    @Test(arguments: [
        ("HTTP/2 200 OK\r\n\r\n", HTTPResponseParseError.malformedStatusLine),
        ("HTTP/1.1 20 OK\r\n\r\n", .malformedStatusLine),
        ("HTTP/1.1 099 Low\r\n\r\n", .malformedStatusLine),
        ("HTTP/1.1 200OK\r\n\r\n", .malformedStatusLine),
        ("HTTP/1.1 200 OK\r\nBad Header\r\n\r\n", .malformedHeader),
        ("HTTP/1.1 200 OK\r\nX : y\r\n\r\n", .malformedHeader),
        ("HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n", .invalidContentLength),
        ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", .invalidContentLength),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", .unsupportedTransferEncoding),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", .malformedChunkedBody),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", .malformedChunkedBody),
        ("HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n", .bodyTooLarge),
    ])
    func malformedResponsesFail(_ text: String, _ error: HTTPResponseParseError) {
        #expect(parse(text) == [.failure(error)])
        #expect(bytewise(text, heads: [false]) == [.failure(error)])
    }

    /// A head that can never end well fails as soon as that shows, not when the request's deadline
    /// passes: line breaks that are not CRLF (all bare LF, one bare LF, a lone CR), and bytes that
    /// cannot begin `HTTP/1.` (garbage, another protocol). None of these inputs holds a CRLF CRLF.
    @Test(arguments: [
        ("HTTP/1.1 200 OK\nContent-Length: 2\n\n{}", HTTPResponseParseError.malformedStatusLine),
        ("HTTP/1.1 200 OK\rContent-Length: 2\r\r{}", .malformedStatusLine),
        ("\nHTTP/1.1 200 OK", .malformedStatusLine),
        ("HTTP/1.1 200 OK\r\nContent-Length: 2\n\n{}", .malformedHeader),
        ("HTTP/1.1 200 OK\r\nX: a\r\nY: b\rZ", .malformedHeader),
        ("\u{0}\u{1}garbage", .malformedStatusLine),
        ("ICY 200 OK", .malformedStatusLine),
        ("HTTP/2", .malformedStatusLine),
        ("<html>", .malformedStatusLine),
    ])
    func headThatCannotEndFailsAtOnce(_ text: String, _ error: HTTPResponseParseError) {
        #expect(parse(text) == [.failure(error)])
        #expect(bytewise(text, heads: [false]) == [.failure(error)])
    }

    @Test func truncatedAndUnsolicitedBytesFail() {
        #expect(parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", finish: true) == [.failure(.truncated)])
        #expect(parse("HTTP/1.1 200 OK\r\nContent-Le", finish: true) == [.failure(.truncated)])
        #expect(
            parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab", finish: true) == [
                .failure(.truncated)
            ])
        #expect(parse("", finish: true) == [])  // closed between responses: nothing to report
        #expect(parse("HTTP/1.1 200 OK\r\n\r\n", heads: []) == [.failure(.unsolicited)])
        var limits = HTTPResponseParser.Limits()
        limits.maxHeaderBytes = 64
        let big = "HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 100) + "\r\n\r\n"
        #expect(parse([Array(big.utf8)], heads: [false], limits: limits) == [.failure(.headersTooLarge)])
    }
}
