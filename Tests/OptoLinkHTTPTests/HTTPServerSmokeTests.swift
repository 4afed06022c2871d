import Testing

@testable import OptoLinkHTTP

@Suite(.timeLimit(.minutes(1)))
struct HTTPServerSmokeTests {
    @Test func servesKeepAliveRequestsOnOneConnection() async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            #expect(server.port > 0)
            let client = try TestClient(port: server.port)
            for i in 0..<3 {
                try client.send("GET /hello/\(i) HTTP/1.1\r\nHost: x\r\n\r\n")
                let response = try client.readResponse()
                #expect(response.status == 200)
                #expect(response.bodyText == "GET /hello/\(i) ")
                #expect(response.header("Connection") == nil)
                #expect(response.header("Date") != nil)
            }
            let counters = server.counters()
            #expect(counters.connectionsAccepted == 1)
            #expect(counters.requests == 3)
        }
    }
}
