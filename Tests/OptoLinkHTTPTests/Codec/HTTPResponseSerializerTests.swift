import OptoLinkHTTP
import Testing

@Suite struct HTTPResponseSerializerTests {
    private func text(
        _ response: HTTPResponse, _ persistence: HTTPResponseSerializer.Persistence = .keepAlive,
        omitBody: Bool = false
    ) -> String {
        var buffer: [UInt8] = []
        HTTPResponseSerializer.serialize(response, persistence: persistence, omitBody: omitBody, into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    @Test func writesStatusLineHeadersLengthAndBody() {
        let response = HTTPResponse(status: 429, headers: ["Content-Type": "application/json"], body: Array("{}".utf8))
        #expect(
            text(response)
                == "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
    }

    @Test func closeAndHTTP10KeepAliveAreAnnounced() {
        let response = HTTPResponse(status: 200, body: Array("ok".utf8))
        #expect(text(response, .close) == "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        #expect(
            text(response, .keepAliveHTTP10)
                == "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok")
    }

    @Test func handlerFramingHeadersAreReplacedAndSplittingIsDefused() {
        let response = HTTPResponse(
            status: 200,
            headers: [
                "Content-Length": "999", "connection": "keep-alive", "Transfer-Encoding": "chunked",
                "X-Evil": "a\r\nSet-Cookie: b",
            ],
            body: Array("abc".utf8))
        #expect(text(response) == "HTTP/1.1 200 OK\r\nX-Evil: a  Set-Cookie: b\r\nContent-Length: 3\r\n\r\nabc")
    }

    @Test func headKeepsLengthButOmitsBody() {
        let response = HTTPResponse(status: 200, body: Array("hello".utf8))
        #expect(text(response, omitBody: true) == "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")
    }

    @Test func statusesWithoutBody() {
        #expect(text(HTTPResponse(status: 204, body: Array("x".utf8))) == "HTTP/1.1 204 No Content\r\n\r\n")
        #expect(text(HTTPResponse(status: 304)) == "HTTP/1.1 304 Not Modified\r\nContent-Length: 0\r\n\r\n")
    }

    @Test(arguments: [
        (502, "Bad Gateway"), (431, "Request Header Fields Too Large"), (418, "Client Error"), (599, "Server Error"),
    ])
    func reasonPhrases(_ status: Int, _ phrase: String) {
        #expect(text(HTTPResponse(status: status)).hasPrefix("HTTP/1.1 \(status) \(phrase)\r\n"))
    }

    @Test func dateHeaderIsIMFFixdate() {
        let line = String(decoding: HTTPDateHeader.format(784_111_777), as: UTF8.self)
        #expect(line == "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n")
    }
}

@Suite struct TimerHeapTests {
    @Test func popsInDeadlineOrderAndTiesInInsertionOrder() {
        var heap = TimerHeap<String>()
        let items: [(UInt64, String)] = [
            (50, "e"), (10, "a"), (30, "c1"), (30, "c2"), (20, "b"), (40, "d"), (30, "c3"),
        ]
        for (deadline, name) in items { heap.schedule(at: deadline, name) }
        #expect(heap.popDue(now: 5) == nil)
        var popped: [String] = []
        while let entry = heap.popDue(now: 100) { popped.append(entry.payload) }
        #expect(popped == ["a", "b", "c1", "c2", "c3", "d", "e"])
        #expect(heap.isEmpty)
    }

    @Test func onlyDueEntriesPop() {
        var heap = TimerHeap<Int>()
        for i in (0..<100).reversed() { heap.schedule(at: UInt64(i * 10), i) }
        var popped: [Int] = []
        while let entry = heap.popDue(now: 495) { popped.append(entry.payload) }
        #expect(popped == Array(0..<50))
        #expect(heap.nextDeadline == 500)
    }
}

@Suite struct HTTPHeadersTests {
    @Test func lookupIgnoresASCIICase() {
        let headers: HTTPHeaders = ["Content-Type": "a", "X-API-Key": "k", "x-api-key": "k2"]
        #expect(headers["content-type"] == "a")
        #expect(headers["X-Api-Key"] == "k")
        #expect(headers.values(for: "X-API-KEY") == ["k", "k2"])
        #expect(headers["Content-Typ"] == nil)
        #expect(headers["Content_Type"] == nil)  // '_' is not '-' folded
        #expect(!"[".caseInsensitiveEquals("{"))  // only letters fold
    }
}
