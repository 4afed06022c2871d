import Foundation
import OptoLink
import OptoLinkHTTP
import OptoLinkStaging
import Testing

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
        ("GET /__admin/health HTTP/1.1\r\n\r\n", 400, "Bad Request"),  // no Host
        ("POST /sdk/events HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\n", 413, "Payload Too Large"),
        (
            "GET / HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "a", count: 20_000) + "\r\n\r\n", 431,
            "Request Header Fields Too Large"
        ),
        ("POST /match HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "Not Implemented"),
        ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505, "HTTP Version Not Supported"),
        (
            "POST /match HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n", 400,
            "Bad Request"
        ),
    ])
    func protocolErrorsCarryTheJSONEnvelope(_ request: String, _ status: Int, _ error: String) async throws {
        let object = try await Self.protocolEnvelope(request, status, error)
        #expect((object["message"] as? String)?.isEmpty == false)
    }

    /// Sends `request` to a fresh emulator and checks the protocol-error envelope every such answer
    /// shares (status, JSON, `statusCode`, `error`, `timestamp`, empty `path`, closed); returns its object.
    private static func protocolEnvelope(_ request: String, _ status: Int, _ error: String) async throws
        -> [String: Any]
    {
        try await withEmulator { e in
            let port = e.server.port
            let answer = await Task.detached { RawSocket.exchange(port: port, Array(request.utf8)) }.value
            #expect(answer.hasPrefix("HTTP/1.1 \(status) "))
            #expect(answer.contains("Content-Type: application/json; charset=utf-8"))
            #expect(answer.contains("Connection: close"))
            let body = try #require(answer.range(of: "\r\n\r\n").map { String(answer[$0.upperBound...]) })
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any], "body: \(body)")
            #expect(object["statusCode"] as? Int == status)
            #expect(object["error"] as? String == error)
            #expect(object["timestamp"] is String)
            #expect(object["path"] as? String == "")
            return object
        }
    }

    /// RFC 9112 §3.2: a Host fault is the emulator's 400 envelope naming it, before any route runs.
    @Test(arguments: [
        ("POST /__admin/reset HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "Host header required"),
        ("GET /__admin/health HTTP/1.1\r\nHost: x\r\nHost: x\r\n\r\n", "More than one Host header"),
        ("GET /__admin/health HTTP/1.1\r\nHost: local host\r\n\r\n", "Invalid Host header or target authority"),
        ("GET /__admin/health HTTP/1.0\r\nHost: a,b\r\n\r\n", "Invalid Host header or target authority"),
    ])
    func hostFaultsAreThe400EnvelopeNamingThem(_ request: String, _ message: String) async throws {
        let object = try await Self.protocolEnvelope(request, 400, "Bad Request")
        #expect(object["message"] as? String == message)
    }

    /// RFC 9112 §6.3: no Content-Length and no Transfer-Encoding is an empty body, so the route
    /// answers (no 411): `curl -X POST …/__admin/reset` works, a route that needs JSON gives
    /// its usual 400, and HTTP/1.0 without Host is still served.
    @Test func requestsWithoutFramingHeadersReachTheirRoute() async throws {
        try await withEmulator { e in
            let port = e.server.port
            func send(_ text: String) async -> String {
                await Task.detached { RawSocket.exchange(port: port, Array(text.utf8)) }.value
            }
            let reset = await send("POST /__admin/reset HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(reset.hasPrefix("HTTP/1.1 200 "), "\(reset)")
            #expect(reset.hasSuffix(#"{"ok":true}"#))
            let events = await send(
                "POST /sdk/events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                    + "Authorization: Bearer \(BackendHarness.clientKey)\r\n\r\n")
            #expect(events.hasPrefix("HTTP/1.1 400 "), "\(events)")
            #expect(events.contains(#""path":"/sdk/events""#))  // answered by the route, not the HTTP layer
            #expect(events.contains(#""field":"deviceId""#))
            let limits = await send("PUT /__admin/limits HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(limits.hasPrefix("HTTP/1.1 400 "), "\(limits)")
            #expect(limits.contains(#""path":"/__admin/limits""#))
            let old = await send("POST /__admin/reset HTTP/1.0\r\n\r\n")
            #expect(old.hasPrefix("HTTP/1.1 200 "), "\(old)")
            #expect(e.server.httpCounters().badRequestsByStatus.isEmpty)
        }
    }

    /// At the connection cap, partial heads that stall (the 16,384-connection lock-out, scaled down to
    /// 4 slots) do not keep a new client out: the oldest is answered the 408 envelope and closed.
    @Test func stalledHeadsAtTheCapGiveWayWithThe408Envelope() async throws {
        let http = HTTPServer.Configuration(
            loopCount: 1, timeouts: .init(request: .seconds(30), shutdownGrace: .milliseconds(300)),
            maxConnections: 4)
        try await withStagingServer(.init(), clock: .system, http: http) { server in
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
