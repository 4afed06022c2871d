import Foundation
import OptoLinkHTTP
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The server as the SDK's real transport (URLSession over libcurl on Linux) sees it.
/// (Part of the serialized ``HTTPServerTests`` so its descriptors do not disturb the fd-leak check.)
extension HTTPServerTests {
    @Test(arguments: ["GET", "POST", "PUT", "DELETE"])
    func urlSessionRequestsAreServed(_ method: String) async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            let session = URLSession(configuration: .ephemeral)
            defer { session.finishTasksAndInvalidate() }
            var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(server.port)/v1/x?y=1")))
            request.httpMethod = method
            if method != "GET" && method != "DELETE" {
                request.httpBody = Data("{\"a\":1}".utf8)
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            for _ in 0..<3 {
                let (data, response) = try await session.data(for: request)
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                let expectedBody = request.httpBody.map { String(decoding: $0, as: UTF8.self) } ?? ""
                #expect(String(decoding: data, as: UTF8.self) == "\(method) /v1/x?y=1 \(expectedBody)")
            }
            #expect(server.counters().requests == 3)
            #expect(server.counters().connectionsAccepted == 1)  // keep-alive reused
        }
    }

    @Test(arguments: ["POST", "PUT"])
    func urlSessionBodylessRequestIsNotRefused(_ method: String) async throws {
        try await withHTTPServer(.init(), handler: echoHandler) { server in
            let session = URLSession(configuration: .ephemeral)
            defer { session.finishTasksAndInvalidate() }
            var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(server.port)/clear")))
            request.httpMethod = method
            let (_, response) = try await session.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
        }
    }
}

@Suite struct HTTPServerCountersCodingTests {
    @Test func badRequestsAreKeyedByStatusText() throws {
        var counters = HTTPServer.Counters()
        counters.requests = 7
        counters.badRequestsByStatus = [400: 2, 431: 1]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(counters), as: UTF8.self)
        #expect(json.contains(#""badRequestsByStatus":{"400":2,"431":1}"#))
        #expect(try JSONDecoder().decode(HTTPServer.Counters.self, from: Data(json.utf8)) == counters)
        #expect(counters.badRequests == 3)
    }
}
