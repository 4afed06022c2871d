import Foundation
import OptoLink
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
}
