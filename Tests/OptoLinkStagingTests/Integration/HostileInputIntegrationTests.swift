import Foundation
import OptoLink
import OptoLinkHTTP
import Testing

@testable import OptoLinkStaging

/// Malformed and oversized requests are answered and the emulator keeps serving others.
@Suite(.timeLimit(.minutes(1))) struct HostileInputIntegrationTests {
    @Test func brokenRequestsAreAnsweredAndOthersStillServed() async throws {
        try await withEmulator { e in
            let port = e.server.port
            async let garbage = Task.detached { RawSocket.exchange(port: port, Array("GARBAGE\r\n\r\n".utf8)) }.value
            async let huge = Task.detached {
                RawSocket.exchange(
                    port: port,
                    Array("POST /sdk/events HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\n{".utf8))
            }.value
            async let malformedJSON = Task.detached {
                RawSocket.exchange(
                    port: port,
                    Array(
                        "POST /match HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 9\r\n\r\n{\"deviceI"
                            .utf8))
            }.value
            let device = e.device()
            _ = try await device.sdk.resolveDeferredLink()
            #expect(await garbage.hasPrefix("HTTP/1.1 400"))
            #expect(await huge.hasPrefix("HTTP/1.1 413"))
            let json = await malformedJSON
            #expect(json.hasPrefix("HTTP/1.1 400"))
            #expect(json.contains(#""statusCode":400"#))
            #expect(json.contains(#""path":"/match""#))
            // Still serving after all of that.
            _ = try await device.sdk.resolveDeferredLink()
            #expect(device.attempts.of(.match).map(\.status) == [201, 201])
        }
    }

    /// Errors the HTTP layer answers by itself carry the same JSON envelope as the routes' errors.
    @Test(arguments: [
        ("GARBAGE\r\n\r\n", 400, "Bad Request"),
        ("POST /sdk/events HTTP/1.1\r\nHost: x\r\n\r\n", 411, "Length Required"),
        ("POST /sdk/events HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\n", 413, "Payload Too Large"),
        (
            "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 20_000) + "\r\n\r\n", 431,
            "Request Header Fields Too Large"
        ),
        ("POST /match HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "Not Implemented"),
        ("GET / HTTP/2.0\r\n\r\n", 505, "HTTP Version Not Supported"),
        ("POST /match HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n", 400, "Bad Request"),
    ])
    func protocolErrorsCarryTheJSONEnvelope(_ request: String, _ status: Int, _ error: String) async throws {
        try await withEmulator { e in
            let port = e.server.port
            let answer = await Task.detached { RawSocket.exchange(port: port, Array(request.utf8)) }.value
            #expect(answer.hasPrefix("HTTP/1.1 \(status) "))
            #expect(answer.contains("Content-Type: application/json; charset=utf-8"))
            let body = try #require(answer.range(of: "\r\n\r\n").map { String(answer[$0.upperBound...]) })
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], "body: \(body)")
            #expect(object["statusCode"] as? Int == status)
            #expect(object["error"] as? String == error)
            #expect((object["message"] as? String)?.isEmpty == false)
            #expect(object["timestamp"] is String)
            #expect(object["path"] as? String == "")
        }
    }

    /// At the connection cap, partial heads that stall (the 16,384-connection lock-out, scaled down to
    /// 4 slots) do not keep a new client out: the oldest is answered the 408 envelope and closed.
    @Test func stalledHeadsAtTheCapGiveWayWithThe408Envelope() async throws {
        let http = HTTPServer.Configuration(
            loopCount: 1, timeouts: .init(request: .seconds(30), shutdownGrace: .milliseconds(300)),
            maxConnections: 4)
        try await withStagingServer(http: http) { server in
            let head = "POST /sdk/events HTTP/1.1\r\nHost: x\r\n"
            let stalled = try (0..<3).map { _ in try HeldSocket(port: server.port) }
            for socket in stalled { try socket.send(head) }
            // Its answer means the loop has read every stalled head sent before it.
            let marker = try HeldSocket(port: server.port)
            try marker.send("GET /__admin/health HTTP/1.1\r\nHost: x\r\n\r\n" + head)
            #expect(try marker.readResponse().head.hasPrefix("HTTP/1.1 200 "))

            let fresh = try HeldSocket(port: server.port, timeout: 5)  // far below the 30 s request timeout
            try fresh.send("GET /__admin/health HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try fresh.readResponse().head.hasPrefix("HTTP/1.1 200 "))

            let answer = try stalled[0].readResponse()
            #expect(answer.head.hasPrefix("HTTP/1.1 408 "))
            #expect(answer.head.contains("Content-Type: application/json; charset=utf-8"))
            #expect(answer.head.contains("Connection: close"))
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any], "\(answer.body)")
            #expect(object["statusCode"] as? Int == 408)
            #expect(object["error"] as? String == "Request Timeout")
            #expect(stalled[0].closesWithNothingMore())
            let counters = server.httpCounters()
            #expect(counters.connectionsReclaimedMidRequest == 1)
            #expect(counters.connectionsRejected == 0)
        }
    }

    @Test func aChunkedRequestBodyIsServed() async throws {
        try await withEmulator { e in
            let port = e.server.port
            let body =
                #"{"platform":"iOS","osVersion":"18.1","deviceModel":"iPhone","language":"en-US","#
                + #""deviceId":"chunked-device-01"}"#
            let half = body.utf8.count / 2
            let chunks =
                String(half, radix: 16) + "\r\n" + String(body.prefix(half)) + "\r\n"
                + String(body.utf8.count - half, radix: 16) + "\r\n" + String(body.dropFirst(half)) + "\r\n0\r\n\r\n"
            let request =
                "POST /match HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n" + chunks
            let answer = await Task.detached { RawSocket.exchange(port: port, Array(request.utf8)) }.value
            #expect(answer.hasPrefix("HTTP/1.1 201 "), "\(answer)")
            #expect(answer.contains(#""matched":"#))
        }
    }
}
