import OptoLinkHTTP
import Testing

@Suite(.timeLimit(.minutes(1)))
struct HTTPRequestParserTests {
    /// Feeds `chunks` one after another and collects every output.
    private func parse(_ chunks: [[UInt8]], limits: HTTPRequestParser.Limits = .init()) -> [HTTPRequestParser.Output] {
        var parser = HTTPRequestParser(limits: limits)
        var outputs: [HTTPRequestParser.Output] = []
        for chunk in chunks {
            parser.append(chunk)
            while let output = parser.next() {
                outputs.append(output)
                if case .failure = output { return outputs }
            }
        }
        return outputs
    }

    private func parse(_ text: String, limits: HTTPRequestParser.Limits = .init()) -> [HTTPRequestParser.Output] {
        parse([Array(text.utf8)], limits: limits)
    }

    private let pipeline =
        "GET /a?x=1 HTTP/1.1\r\nHost: h\r\nAccept: */*\r\n\r\n"
        + "POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\nContent-Type: text/plain\r\n\r\nhello world"
        + "\r\n"  // a stray CRLF between requests is allowed
        + "DELETE /c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"

    @Test func parsesRequestLineHeadersAndQuery() throws {
        let outputs = parse(
            "GET /acme/abc/data?deviceId=x&y=2 HTTP/1.1\r\nHost: example\r\nX-Request-Id:  r-1 \r\n\r\n")
        guard case .request(let request, let keepAlive) = try #require(outputs.first) else {
            Issue.record("expected a request, got \(outputs)")
            return
        }
        #expect(request.method == "GET")
        #expect(request.target == "/acme/abc/data?deviceId=x&y=2")
        #expect(request.path == "/acme/abc/data")
        #expect(request.query == "deviceId=x&y=2")
        #expect(request.version == "HTTP/1.1")
        #expect(request.headers["host"] == "example")
        #expect(request.headers["x-request-id"] == "r-1")  // optional whitespace trimmed
        #expect(request.body.isEmpty)
        #expect(keepAlive)
        #expect(outputs.count == 1)
    }

    @Test func pipelinedRequestsComeOutInOrder() {
        let outputs = parse(pipeline)
        let summary = outputs.map { output -> String in
            guard case .request(let r, let keepAlive) = output else { return "failure" }
            return "\(r.method) \(r.path) \(String(decoding: r.body, as: UTF8.self)) \(keepAlive)"
        }
        #expect(summary == ["GET /a  true", "POST /b hello world true", "DELETE /c  false"])
    }

    @Test func byteByByteFragmentationGivesTheSameRequests() {
        let whole = parse(pipeline)
        let bytes = Array(pipeline.utf8)
        let fragmented = parse(bytes.map { [$0] })
        #expect(fragmented == whole)
        #expect(fragmented.count == 3)
        // And every two-piece split point.
        for split in stride(from: 1, to: bytes.count, by: 7) {
            #expect(parse([Array(bytes[..<split]), Array(bytes[split...])]) == whole)
        }
    }

    @Test func idleOnlyBetweenRequests() {
        var parser = HTTPRequestParser()
        #expect(parser.isIdle)
        parser.append(Array("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nab".utf8))
        #expect(parser.next() == nil)
        #expect(!parser.isIdle)
        parser.append(Array("c".utf8))
        guard case .request(let request, _) = parser.next() else {
            Issue.record("expected a request")
            return
        }
        #expect(request.body == Array("abc".utf8))
        #expect(parser.isIdle)
        #expect(parser.next() == nil)
    }

    @Test func expectContinueIsReportedUntilTheBodyArrives() {
        var parser = HTTPRequestParser()
        parser.append(Array("PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n".utf8))
        #expect(parser.next() == nil)
        #expect(parser.isAwaitingContinue)
        parser.continueSent()
        #expect(!parser.isAwaitingContinue)
        parser.append(Array("abc".utf8))
        guard case .request(let request, _) = parser.next() else {
            Issue.record("expected the request once its body arrived")
            return
        }
        #expect(request.body == Array("abc".utf8))
        #expect(!parser.isAwaitingContinue)
    }

    // MARK: - Limits

    @Test func headersOverTheLimitAre431EvenBeforeTheyEnd() {
        let big = "GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + String(repeating: "a", count: 16 * 1024) + "\r\n"
        #expect(parse(big) == [.failure(.headersTooLarge)])
        #expect(parse(big + "\r\n") == [.failure(.headersTooLarge)])
    }

    @Test func headersJustUnderTheLimitAreAccepted() {
        let prefix = "GET / HTTP/1.1\r\nHost: h\r\nX-Big: "
        let filler = 16 * 1024 - prefix.utf8.count - 4
        let text = prefix + String(repeating: "a", count: filler) + "\r\n\r\n"
        #expect(text.utf8.count == 16 * 1024)
        guard case .request = parse(text).first else {
            Issue.record("a head of exactly 16 KiB must be accepted")
            return
        }
        let tooBig = prefix + String(repeating: "a", count: filler + 1) + "\r\n\r\n"
        #expect(parse(tooBig) == [.failure(.headersTooLarge)])
    }

    @Test func bodyOverTheLimitIs413WithoutWaitingForIt() {
        #expect(parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1048577\r\n\r\n") == [.failure(.bodyTooLarge)])
        #expect(
            parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n") == [
                .failure(.bodyTooLarge)
            ])
        let limits = HTTPRequestParser.Limits(maxBodyBytes: 4)
        #expect(
            parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n12345", limits: limits) == [
                .failure(.bodyTooLarge)
            ])
        guard
            case .request(let r, _) = parse(
                "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\n1234", limits: limits
            ).first
        else {
            Issue.record("a body at the limit must be accepted")
            return
        }
        #expect(r.body.count == 4)
    }

    @Test func bodyOfExactlyOneMebibyteIsAccepted() {
        let body = [UInt8](repeating: 0x61, count: 1 << 20)
        let outputs = parse([Array("PUT /big HTTP/1.1\r\nHost: h\r\nContent-Length: 1048576\r\n\r\n".utf8), body])
        guard case .request(let request, _) = outputs.first else {
            Issue.record("expected a request, got \(outputs.count) outputs")
            return
        }
        #expect(request.body.count == 1 << 20)
    }

    // MARK: - Errors

    @Test(arguments: [
        "GET /\r\n\r\n",
        "GET  / HTTP/1.1\r\nHost: h\r\n\r\n",
        "G@T / HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET / HTTP/1.1 extra\r\n\r\n",
        "GET / FOO/1.1\r\n\r\n",
        "GET / http/1.1\r\n\r\n",
        " GET / HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /a\u{01}b HTTP/1.1\r\nHost: h\r\n\r\n",
        "\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\r\n\r\n",  // a TLS hello on the plain port
    ])
    func malformedRequestLineIs400(_ text: String) {
        #expect(parse(text) == [.failure(.malformedRequestLine)])
    }

    @Test(arguments: [
        "GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\n folded: continuation\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nBad Name: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nName : x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\n: empty-name\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX: a\u{00}b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX: a\nY: b\r\n\r\n",  // bare LF inside the head
        "GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n",
    ])
    func malformedHeaderIs400(_ text: String) {
        #expect(parse(text) == [.failure(.malformedHeader)])
    }

    /// A head with line breaks other than CRLF never holds a CRLF CRLF: it fails as soon as the
    /// bad break arrives (400), not at the request timeout (408).
    @Test(arguments: [
        ("GET / HTTP/1.1\nHost: a\n\n", HTTPParseError.malformedRequestLine),
        ("GET / HTTP/1.1\rHost: a\r\r", .malformedRequestLine),
        ("\nGET / HTTP/1.1", .malformedRequestLine),
        ("GET / HTTP/1.1\r\nHost: a\n\n", .malformedHeader),
        ("POST /sdk/events HTTP/1.1\r\nHost: a\r\nContent-Length: 2\rX", .malformedHeader),
    ])
    func headWithBareLineBreaksFailsAtOnce(_ text: String, _ error: HTTPParseError) {
        #expect(parse(text) == [.failure(error)])
    }

    @Test(arguments: ["gzip", "identity", "gzip, chunked", "chunked;q=1", ""])
    func transferCodingOtherThanChunkedIs501(_ coding: String) {
        let text = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: \(coding)\r\n\r\nabc"
        #expect(parse(text) == [.failure(.unsupportedTransferEncoding)])
        #expect(HTTPParseError.unsupportedTransferEncoding.status == 501)
    }

    /// The smuggling shapes: framing two ways at once, chunked where it cannot be trusted.
    @Test(arguments: [
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\nContent-Length: 3\r\n\r\nabc",
        "POST / HTTP/1.0\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n",
    ])
    func conflictingTransferEncodingIs400(_ text: String) {
        #expect(parse(text) == [.failure(.invalidTransferEncoding)])
        #expect(HTTPParseError.invalidTransferEncoding.status == 400)
    }

    private static let chunkedHead = "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n"

    @Test func chunkedBodyIsDecodedWithExtensionsAndTrailers() throws {
        let text =
            Self.chunkedHead + "3;name=value\r\nabc\r\n" + "a \t; x\r\n0123456789\r\n" + "0\r\nX-Checksum: 1\r\n\r\n"
            + "GET /next HTTP/1.1\r\nHost: h\r\n\r\n"
        let whole = parse(text)
        guard case .request(let request, let keepAlive) = try #require(whole.first) else {
            Issue.record("expected a request, got \(whole)")
            return
        }
        #expect(String(decoding: request.body, as: UTF8.self) == "abc0123456789")
        #expect(request.headers["transfer-encoding"] == "Chunked")
        #expect(keepAlive)
        #expect(whole.count == 2)
        // Cut at every byte: the same two requests.
        #expect(parse(Array(text.utf8).map { [$0] }) == whole)
    }

    @Test(arguments: [
        "0x3\r\nabc\r\n0\r\n\r\n",  // a 0x prefix
        "-3\r\nabc\r\n0\r\n\r\n",  // a sign
        " 3\r\nabc\r\n0\r\n\r\n",  // leading whitespace
        "3 \r\nabc\r\n0\r\n\r\n",  // trailing whitespace without an extension
        "3\nabc\r\n0\r\n\r\n",  // bare LF after the size
        "3\r\nabcX\r\n0\r\n\r\n",  // more data than the size says
        "3\r\nabc\n0\r\n\r\n",  // bare LF after the data
        "3;a\u{01}b\r\nabc\r\n0\r\n\r\n",  // a control character in an extension
        "1000000000000000\r\n",  // 16 hex digits
        "\r\n",  // no size at all
        "0\r\nBad Trailer\r\n\r\n",  // a trailer without a colon
        "0\r\n folded\r\n\r\n",  // an obsolete fold in the trailers
    ])
    func malformedChunkedBodyIs400(_ body: String) {
        #expect(parse(Self.chunkedHead + body) == [.failure(.malformedChunkedBody)])
        #expect(parse(Array((Self.chunkedHead + body).utf8).map { [$0] }) == [.failure(.malformedChunkedBody)])
    }

    @Test func chunkedBodyLimits() {
        let limits = HTTPRequestParser.Limits(maxHeaderBytes: 256, maxBodyBytes: 10)
        #expect(parse(Self.chunkedHead + "6\r\nabcdef\r\n5\r\n", limits: limits) == [.failure(.bodyTooLarge)])
        let trailer = "X-T: " + String(repeating: "t", count: 300) + "\r\n"
        #expect(parse(Self.chunkedHead + "0\r\n" + trailer + "\r\n", limits: limits) == [.failure(.headersTooLarge)])
        guard case .request(let r, _) = parse(Self.chunkedHead + "A\r\n0123456789\r\n0\r\n\r\n", limits: limits).first
        else {
            Issue.record("a body of exactly the limit is accepted")
            return
        }
        #expect(r.body.count == 10)
    }

    @Test func chunkedBodyWithExpectContinueAwaitsContinue() {
        var parser = HTTPRequestParser()
        parser.append(
            Array("POST /e HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
        #expect(parser.next() == nil)
        #expect(parser.isAwaitingContinue)
        parser.continueSent()
        #expect(!parser.isAwaitingContinue)
        parser.append(Array("0\r\n\r\n".utf8))
        guard case .request(let r, _) = parser.next() else {
            Issue.record("the empty chunked body completes the request")
            return
        }
        #expect(r.body.isEmpty)
    }

    @Test func chunkedSatisfiesTheLengthRequirement() {
        guard case .request = parse(Self.chunkedHead + "0\r\n\r\n", limits: .init(requireContentLength: true)).first
        else {
            Issue.record("a chunked POST is not 411")
            return
        }
    }

    /// RFC 9112 §6.3: neither `Content-Length` nor `Transfer-Encoding` means an empty body, for
    /// every method (no 411 for POST, PUT or PATCH).
    @Test(arguments: ["POST", "PUT", "PATCH", "DELETE"])
    func requestWithoutFramingHeadersHasAnEmptyBody(_ method: String) {
        let outputs = parse("\(method) /x HTTP/1.1\r\nHost: h\r\n\r\n\(method) /y HTTP/1.1\r\nHost: h\r\n\r\n")
        let seen = outputs.map { output -> String in
            guard case .request(let r, let keepAlive) = output else { return "\(output)" }
            return "\(r.method) \(r.path) \(r.body.count) \(keepAlive)"
        }
        // The next request starts right after the head: no byte of it was taken as a body.
        #expect(seen == ["\(method) /x 0 true", "\(method) /y 0 true"])
    }

    /// 411 stays reachable only for a server that opts in; a chunked or length-framed body satisfies it.
    @Test(arguments: ["POST", "PUT", "PATCH"])
    func requireContentLengthOptInStillAnswers411(_ method: String) {
        let strict = HTTPRequestParser.Limits(requireContentLength: true)
        #expect(HTTPRequestParser.Limits().requireContentLength == false)
        #expect(parse("\(method) /x HTTP/1.1\r\nHost: h\r\n\r\n", limits: strict) == [.failure(.lengthRequired)])
        guard
            case .request = parse("\(method) /x HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", limits: strict).first
        else {
            Issue.record("Content-Length: 0 satisfies requireContentLength")
            return
        }
    }

    // MARK: - Host (RFC 9112 §3.2)

    @Test(arguments: [
        "GET / HTTP/1.1\r\n\r\n",
        "POST /x HTTP/1.1\r\nContent-Length: 0\r\nX-Host: h\r\n\r\n",  // a look-alike name is not Host
        "GET http://h/p HTTP/1.1\r\n\r\n",  // absolute-form still needs Host in HTTP/1.1 (§3.2.2)
    ])
    func http11WithoutHostIs400(_ text: String) {
        #expect(parse(text) == [.failure(.missingHost)])
        #expect(HTTPParseError.missingHost.status == 400)
    }

    @Test(arguments: [
        "Host: a\r\nHost: a\r\n",  // even the same value twice
        "Host: a\r\nHost: b\r\n",
        "Host: a\r\nX: 1\r\nhOsT: b\r\n",
        "Host:\r\nHost:\r\n",
    ])
    func moreThanOneHostIs400(_ fields: String) {
        #expect(parse("GET / HTTP/1.1\r\n\(fields)\r\n") == [.failure(.multipleHosts)])
        // "any request message": HTTP/1.0 too.
        #expect(parse("GET / HTTP/1.0\r\n\(fields)\r\n") == [.failure(.multipleHosts)])
    }

    @Test(arguments: [
        "a b", "a\tb", "a,b", "a, b", "user@h", "h/p", "h?q", "h#f", "h:8x", "h:80:90", "[::1", "[::1]x", "[]",
        "h%zz", "h%4", "h\u{e9}", "<h>", "h\"",
    ])
    func invalidHostValueIs400(_ value: String) {
        #expect(parse("GET / HTTP/1.1\r\nHost: \(value)\r\n\r\n") == [.failure(.invalidHost)])
        #expect(parse("GET / HTTP/1.0\r\nHost: \(value)\r\n\r\n") == [.failure(.invalidHost)])
    }

    /// `uri-host [":" port]`, including the empty value RFC 9112 §3.2 asks for when the target
    /// URI has no authority (the server then uses its own name).
    @Test(arguments: [
        "", "h", "example.com", "Example.COM:8080", "127.0.0.1:80", "[::1]", "[::1]:8080", "[v1.x]", "h:",
        "my_host.local", "xn--bcher-kva.example", "a%2Db", "a!$&'()*+;=b",
    ])
    func validHostValueIsAccepted(_ value: String) {
        guard case .request(let r, _) = parse("GET / HTTP/1.1\r\nHost: \(value)\r\n\r\n").first else {
            Issue.record("Host: \(value) is valid")
            return
        }
        #expect(r.headers["Host"] == value)
    }

    @Test func http10MayLeaveHostOut() {
        guard case .request(let r, let keepAlive) = parse("GET /old HTTP/1.0\r\n\r\n").first else {
            Issue.record("HTTP/1.0 without Host is a valid request")
            return
        }
        #expect(r.path == "/old")
        #expect(r.headers["Host"] == nil)
        #expect(!keepAlive)
    }

    /// RFC 9112 §3.2.2: the authority of an absolute-form target replaces Host, and the handler
    /// sees origin-form.
    @Test(arguments: [
        ("GET http://example.com:8080/p?q=1 HTTP/1.1\r\nHost: other\r\n\r\n", "/p?q=1", "example.com:8080"),
        ("GET HTTPS://h?x=1 HTTP/1.1\r\nHost: h\r\n\r\n", "/?x=1", "h"),
        ("GET http://[::1]:81 HTTP/1.1\r\nHost:\r\nAccept: */*\r\n\r\n", "/", "[::1]:81"),
        ("GET http://h/old HTTP/1.0\r\n\r\n", "/old", "h"),  // HTTP/1.0 may omit Host
    ])
    func absoluteFormTargetsAuthorityWins(_ text: String, _ target: String, _ host: String) {
        guard case .request(let r, _) = parse(text).first else {
            Issue.record("\(text) is a valid absolute-form request")
            return
        }
        #expect(r.target == target)
        #expect(r.headers.values(for: "Host") == [host])
    }

    @Test(arguments: ["http:///p", "http://u@h/p", "http://:80/p", "https://h%/p", "http://a,b/"])
    func absoluteFormWithoutAValidAuthorityIs400(_ target: String) {
        #expect(parse("GET \(target) HTTP/1.1\r\nHost: h\r\n\r\n") == [.failure(.invalidHost)])
    }

    /// Both kinds at once, cut at every byte and at every two-piece split: a body-less POST, then
    /// an HTTP/1.0 request without Host, then an HTTP/1.1 request without one.
    @Test func hostAndEmptyBodyRulesDoNotDependOnFragmentation() {
        let stream =
            "POST /__admin/reset HTTP/1.1\r\nHost: h\r\n\r\n" + "GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
            + "POST /next HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"
        let whole = parse(stream)
        let seen = whole.map { output -> String in
            guard case .request(let r, _) = output else { return "\(output)" }
            return "\(r.method) \(r.path) \(r.body.count)"
        }
        #expect(seen == ["POST /__admin/reset 0", "GET /old 0", "failure(HTTP 400 (missing_host))"])
        let bytes = Array(stream.utf8)
        #expect(parse(bytes.map { [$0] }) == whole)
        for split in 1..<bytes.count {
            #expect(parse([Array(bytes[..<split]), Array(bytes[split...])]) == whole)
        }
    }

    @Test(arguments: ["abc", "-1", "+3", "1, 1", "0x10", " ", "3 3"])
    func invalidContentLengthIs400(_ value: String) {
        #expect(
            parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \(value)\r\n\r\n123") == [
                .failure(.invalidContentLength)
            ])
    }

    @Test func conflictingContentLengthsAre400AndEqualOnesAccepted() {
        #expect(
            parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n1234")
                == [.failure(.invalidContentLength)])
        guard
            case .request(let r, _) = parse(
                "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\ncontent-length: 3\r\n\r\n123"
            ).first
        else {
            Issue.record("equal duplicate Content-Length must be accepted")
            return
        }
        #expect(r.body == Array("123".utf8))
    }

    @Test(arguments: ["HTTP/2.0", "HTTP/1.2", "HTTP/0.9"])
    func otherVersionsAre505(_ version: String) {
        #expect(parse("GET / \(version)\r\n\r\n") == [.failure(.unsupportedVersion)])
    }

    @Test func failureIsSticky() {
        var parser = HTTPRequestParser()
        parser.append(Array("BROKEN\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        #expect(parser.next() == .failure(.malformedRequestLine))
        #expect(parser.next() == .failure(.malformedRequestLine))
    }

    // MARK: - Persistence

    @Test(arguments: [
        ("HTTP/1.1", "", true),
        ("HTTP/1.1", "Connection: close\r\n", false),
        ("HTTP/1.1", "Connection: CLOSE\r\n", false),
        ("HTTP/1.1", "Connection: keep-alive, close\r\n", false),
        ("HTTP/1.1", "Connection: Upgrade\r\n", true),
        ("HTTP/1.0", "", false),
        ("HTTP/1.0", "Connection: keep-alive\r\n", true),
        ("HTTP/1.0", "Connection: Keep-Alive\r\n", true),
        ("HTTP/1.0", "Connection: keep-alive\r\nConnection: close\r\n", false),
    ])
    func keepAliveRules(_ version: String, _ header: String, _ expected: Bool) {
        guard case .request(let r, let keepAlive) = parse("GET / \(version)\r\nHost: h\r\n\(header)\r\n").first else {
            Issue.record("expected a request")
            return
        }
        #expect(r.version == version)
        #expect(keepAlive == expected)
    }
}
