import Foundation
import OptoLink
import OptoLinkStaging
import OptoLinkTestSupport
import Testing

/// Rate limits enforced by the emulator and obeyed by the SDK, over real sockets.
@Suite(.timeLimit(.minutes(1))) struct SDKLimitsIntegrationTests {
    @Test func thirtyFirstMatchFromOneIpIs429WithNAndTheSdkWaitsIt() async throws {
        try await withEmulator { e in
            let device = e.device(maxRetries: 0)
            for _ in 0..<30 { _ = try await device.sdk.resolveDeferredLink() }
            e.time.advance(15)
            let limited = try #require(await apiError { _ = try await device.sdk.resolveDeferredLink() })
            #expect(limited.status == 429)
            #expect(limited.message == "Rate limit exceeded. Retry after 45 seconds.")
            #expect(limited.retryAfterSeconds == 45)
            #expect(device.attempts.of(.match).count == 31)

            // A device whose clock drives the emulator's: it sleeps exactly N, then gets through.
            let clock = EmulatorLinkedClock(e.time)
            let patient = e.device(maxRetries: 1, clock: clock)
            #expect(try await patient.sdk.resolveDeferredLink() == nil)
            #expect(patient.attempts.of(.match).map(\.status) == [429, 201])
            #expect(clock.sleeps == [.seconds(45)])

            let bucket = try #require(e.server.counters().buckets.first { $0.bucket == .match })
            #expect(bucket.key == "127.0.0.1")
            #expect(bucket.windows.map(\.accepted) == [30, 1])
            #expect(bucket.windows.map(\.rejected) == [2, 0])
        }
    }

    @Test func sessionIdentityAndClearShareOneKeyBucket() async throws {
        var configuration = StagingConfiguration()
        configuration.limits.sdk = StagingRateLimitRule(limit: 5, windowSeconds: 2)
        try await withEmulator(configuration) { e in
            let device = e.device(maxRetries: 0)
            await device.sdk.start()  // miss → session (1)
            await device.sdk.waitForBackgroundWork()
            try await device.sdk.setIdentity(externalId: "a")  // 2
            try await device.sdk.clearIdentity()  // 3
            try await device.sdk.setIdentity(externalId: "b")  // 4
            try await device.sdk.clearIdentity()  // 5
            let limited = try #require(await apiError { try await device.sdk.setIdentity(externalId: "c") })
            #expect(limited.status == 429)
            #expect(limited.retryAfterSeconds == 2)
            #expect(limited.message == "Rate limit exceeded. Retry after 2 seconds.")
            try await device.sdk.trackEvent(name: "own-bucket")  // events are limited separately
            let other = e.device(apiKey: "opl_sdk_test_globex_client", maxRetries: 0)
            await other.sdk.start()
            await other.sdk.waitForBackgroundWork()
            try await other.sdk.setIdentity(externalId: "g")  // another key, another bucket
            #expect(e.server.ledger().filter { $0.endpoint != "events" }.count == 7)
        }
    }

    @Test(arguments: [true, false])
    func forwardedForIsTrustedOnlyWhenConfigured(trust: Bool) async throws {
        var configuration = StagingConfiguration(trustForwardedFor: trust)
        configuration.limits.match = StagingRateLimitRule(limit: 1, windowSeconds: 60)
        try await withEmulator(configuration) { e in
            let first = e.device(maxRetries: 0, middlewares: [ForwardedFor(ip: "198.51.100.1")])
            let second = e.device(maxRetries: 0, middlewares: [ForwardedFor(ip: "198.51.100.2")])
            _ = try await first.sdk.resolveDeferredLink()
            let outcome = await apiError { _ = try await second.sdk.resolveDeferredLink() }
            if trust {
                #expect(outcome == nil)
                #expect(e.server.counters().buckets.map(\.key) == ["198.51.100.1", "198.51.100.2"])
            } else {
                #expect(outcome?.status == 429)
                #expect(e.server.counters().buckets.map(\.key) == ["127.0.0.1"])
            }
        }
    }

    @Test func ipv6LoopbackPeerIsTheBucketKey() async throws {
        try await withEmulator(StagingConfiguration(host: "::1")) { e in
            #expect(e.server.baseURL.absoluteString == "http://[::1]:\(e.server.port)")
            // FoundationNetworking refuses `http://[::1]:port` URLs (NSURLErrorBadURL), so a raw socket.
            let body = #"{"deviceId":"device-0001","platform":"iOS","osVersion":"18.1","language":"en-US"}"#
            let request =
                "POST /match HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            let port = e.server.port
            let answer = await Task.detached { RawSocket.exchange(port: port, Array(request.utf8), ipv6: true) }.value
            #expect(answer.hasPrefix("HTTP/1.1 201"))
            #expect(answer.hasSuffix(#"{"matched":false,"matchMethod":"NONE"}"#))
            #expect(e.server.counters().buckets.map(\.key) == ["::1"])
        }
    }

    @Test func forwardedForPutsTheClickAndTheMatchOnTheSameVirtualIp() async throws {
        try await withEmulator(StagingConfiguration(trustForwardedFor: true)) { e in
            _ = try await e.fetch(
                "GET", "/acme/welcome",
                headers: [
                    "User-Agent": BackendHarness.safariUA, "Accept-Language": "en-US", "X-Forwarded-For": "203.0.113.9",
                ])
            let elsewhere = e.device(middlewares: [ForwardedFor(ip: "203.0.113.10")])
            #expect(try await elsewhere.sdk.resolveDeferredLink() == nil)
            let same = e.device(middlewares: [ForwardedFor(ip: "203.0.113.9")])
            #expect(try await same.sdk.resolveDeferredLink()?.matchMethod == .fingerprintExact)
        }
    }
}
