import OptoLinkHTTP
import SoakSupport
import Testing

/// Seeded random inputs: the parser must answer every byte stream with requests or one failure,
/// never trap, and must not depend on how a valid stream is cut into reads.
@Suite(.timeLimit(.minutes(1)))
struct HTTPRequestParserFuzzTests {

    private func drain(_ parser: inout HTTPRequestParser, into outputs: inout [HTTPRequestParser.Output]) -> Bool {
        while let output = parser.next() {
            outputs.append(output)
            if case .failure = output { return false }
        }
        return true
    }

    @Test func randomBytesNeverTrap() {
        var random = SplitMix64(seed: 42)
        let tokens: [[UInt8]] = [
            "GET", "POST", " ", "/", "/a?b=c", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "\r\n", "\r\n\r\n", "\n", ":",
            "Host: h", "Content-Length: ", "12", "-1", "Transfer-Encoding: chunked", "Connection: close", "\t", "\0",
        ].map { Array($0.utf8) }
        var failures = 0
        var requests = 0
        for _ in 0..<3000 {
            var parser = HTTPRequestParser(limits: .init(maxHeaderBytes: 512, maxBodyBytes: 64))
            var outputs: [HTTPRequestParser.Output] = []
            // Half the streams start with a valid request, so garbage also arrives after one.
            var bytes: [UInt8] = Bool.random(using: &random) ? Array("GET /ok HTTP/1.1\r\nHost: h\r\n\r\n".utf8) : []
            for _ in 0..<Int.random(in: 0..<120, using: &random) {
                if Int.random(in: 0..<4, using: &random) == 0 {
                    bytes.append(UInt8.random(in: 0...255, using: &random))
                } else {
                    bytes += tokens[Int.random(in: 0..<tokens.count, using: &random)]
                }
            }
            var offset = 0
            while offset < bytes.count {
                let step = min(bytes.count - offset, Int.random(in: 1...40, using: &random))
                parser.append(bytes[offset..<(offset + step)])
                offset += step
                if !drain(&parser, into: &outputs) { break }
            }
            if case .failure = outputs.last { failures += 1 }
            requests += outputs.filter { if case .request = $0 { true } else { false } }.count
        }
        #expect(failures > 100)  // the generator does produce rejected input
        #expect(requests > 1000)
    }

    @Test func randomCutsOfAValidStreamParseAlike() {
        var random = SplitMix64(seed: 7)
        var stream: [UInt8] = []
        var expected: [String] = []
        for i in 0..<200 {
            let body = String(repeating: "b", count: Int.random(in: 0..<50, using: &random))
            let method = body.isEmpty ? "GET" : "POST"
            let length = body.isEmpty ? "" : "Content-Length: \(body.utf8.count)\r\n"
            stream += Array("\(method) /r/\(i)?q=\(i) HTTP/1.1\r\nHost: h\r\nX-N: \(i)\r\n\(length)\r\n\(body)".utf8)
            expected.append("\(method) /r/\(i) \(body.utf8.count)")
        }
        for _ in 0..<20 {
            var parser = HTTPRequestParser()
            var outputs: [HTTPRequestParser.Output] = []
            var offset = 0
            while offset < stream.count {
                let step = min(stream.count - offset, Int.random(in: 1...300, using: &random))
                parser.append(stream[offset..<(offset + step)])
                offset += step
                _ = drain(&parser, into: &outputs)
            }
            let seen = outputs.map { output -> String in
                guard case .request(let r, _) = output else { return "failure" }
                return "\(r.method) \(r.path) \(r.body.count)"
            }
            #expect(seen == expected)
            #expect(parser.isIdle)
        }
    }
}
