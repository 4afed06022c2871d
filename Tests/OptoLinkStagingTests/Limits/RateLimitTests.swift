import Foundation
import OptoLinkHTTP
import OptoLinkStaging
import Testing

/// docs/CONTRACT.md §1 "Rate limits": buckets, the exact 429 message and N, in virtual time.
@Suite struct RateLimitTests {
    @Test func thirtyFirstMatchInAWindowIs429WithN() throws {
        let h = BackendHarness()
        for i in 0..<30 {
            #expect(try h.match(iosMatchBody()).status == 201, "hit \(i + 1)")
            h.time.advance(0.5)
        }
        // 15 s into the 60 s window that opened at the first hit → 45 s left.
        let limited = try h.match(iosMatchBody())
        #expect(limited.status == 429)
        #expect(try limited.message() == "Rate limit exceeded. Retry after 45 seconds.")
        #expect(limited.headers["Retry-After"] == nil)
        let body = try limited.json()
        #expect(Set(body.keys) == ["statusCode", "error", "message", "timestamp", "path"])
        #expect(body["error"] as? String == "Too Many Requests")
        h.time.advance(44.5)
        #expect(try h.match(iosMatchBody()).message() == "Rate limit exceeded. Retry after 1 second.")
        h.time.advance(0.5)
        #expect(try h.match(iosMatchBody()).status == 201)
    }

    @Test func nIsRoundedUpAndNeverZeroAndSingularAtOne() throws {
        let h = BackendHarness(StagingConfiguration(limits: StagingLimits(match: .init(limit: 1, windowSeconds: 2))))
        #expect(try h.match(iosMatchBody()).status == 201)
        h.time.advance(0.25)
        #expect(try h.match(iosMatchBody()).message() == "Rate limit exceeded. Retry after 2 seconds.")
        h.time.advance(1.0)
        #expect(try h.match(iosMatchBody()).message() == "Rate limit exceeded. Retry after 1 second.")
        h.time.advance(0.5)
        #expect(try h.match(iosMatchBody()).message() == "Rate limit exceeded. Retry after 1 second.")
        h.time.advance(0.25)
        #expect(try h.match(iosMatchBody()).status == 201)
        #expect(RateLimiter.wholeSeconds(0) == 1)
        #expect(RateLimiter.wholeSeconds(1.0) == 1)
        #expect(RateLimiter.wholeSeconds(1.0001) == 2)
    }

    @Test func matchIsPerClientIP() throws {
        var h = BackendHarness(StagingConfiguration(limits: StagingLimits(match: .init(limit: 2, windowSeconds: 60))))
        for _ in 0..<2 { _ = try h.match(iosMatchBody()) }
        #expect(try h.match(iosMatchBody()).status == 429)
        h.peer = "10.0.0.2"
        #expect(try h.match(iosMatchBody()).status == 201)
    }

    @Test func forwardedForIsHonouredOnlyWhenTrusted() throws {
        let limits = StagingLimits(match: .init(limit: 1, windowSeconds: 60))
        let trusting = BackendHarness(StagingConfiguration(trustForwardedFor: true, limits: limits))
        #expect(try trusting.match(iosMatchBody(), headers: ["X-Forwarded-For": "203.0.113.1, 10.0.0.1"]).status == 201)
        #expect(try trusting.match(iosMatchBody(), headers: ["X-Forwarded-For": "203.0.113.2"]).status == 201)
        #expect(try trusting.match(iosMatchBody(), headers: ["X-Forwarded-For": "203.0.113.1"]).status == 429)
        let keys = trusting.backend.counters().buckets.filter { $0.bucket == .match }.map(\.key)
        #expect(keys == ["203.0.113.1", "203.0.113.2"])

        let ignoring = BackendHarness(StagingConfiguration(trustForwardedFor: false, limits: limits))
        #expect(try ignoring.match(iosMatchBody(), headers: ["X-Forwarded-For": "203.0.113.1"]).status == 201)
        #expect(try ignoring.match(iosMatchBody(), headers: ["X-Forwarded-For": "203.0.113.2"]).status == 429)
    }

    @Test func sessionIdentityAndClearShareOneBucketPerKey() throws {
        let h = BackendHarness(StagingConfiguration(limits: StagingLimits(sdk: .init(limit: 5, windowSeconds: 2))))
        #expect(try h.session("device-0001").status == 200)
        #expect(try h.sdk("/sdk/identity", ["deviceId": "device-0001", "externalId": "u1"]).status == 200)
        #expect(try h.sdk("/sdk/identity/clear", ["deviceId": "device-0001"]).status == 200)
        #expect(try h.session("device-0001").status == 200)
        #expect(try h.sdk("/sdk/identity", ["deviceId": "device-0001", "externalId": "u2"]).status == 200)
        let sixth = try h.sdk("/sdk/identity/clear", ["deviceId": "device-0001"])
        #expect(sixth.status == 429)
        #expect(try sixth.message() == "Rate limit exceeded. Retry after 2 seconds.")
        // Events have their own bucket; another key has its own sdk bucket.
        #expect(try h.event("device-0001").status == 200)
        #expect(try h.session("device-0002", key: "opl_sdk_test_acme_rotated").status == 200)
        h.time.advance(2)
        #expect(try h.session("device-0001").status == 200)
        let sdk = h.backend.counters().buckets.filter { $0.bucket == .sdk }
        #expect(sdk.count == 2)
        // Both keys show as their redaction; the hash after it tells them apart.
        #expect(Set(sdk.map { $0.key.split(separator: "#").first ?? "" }) == ["opl_sdk_test_…", "opl_sdk_test_…ated"])
        #expect(Set(sdk.map(\.key)).count == 2)
        let main = try #require(sdk.first { $0.windows.count == 2 })
        #expect(main.windows.map(\.accepted) == [5, 1])
        #expect(main.windows.map(\.rejected) == [1, 0])
    }

    @Test func eventsArePerKey() throws {
        let h = BackendHarness(StagingConfiguration(limits: StagingLimits(events: .init(limit: 3, windowSeconds: 10))))
        _ = try h.session("device-0001")
        for _ in 0..<3 { #expect(try h.event("device-0001").status == 200) }
        #expect(try h.event("device-0001").status == 429)
        #expect(h.backend.ledger().filter { $0.endpoint == "events" }.count == 3)
    }

    @Test func dataIsPerIP() throws {
        let h = BackendHarness(StagingConfiguration(limits: StagingLimits(data: .init(limit: 2, windowSeconds: 1))))
        #expect(try h.respond("GET", "/acme/welcome/data").status == 200)
        #expect(try h.respond("GET", "/acme/nope/data").status == 404)
        let third = try h.respond("GET", "/acme/welcome/data")
        #expect(third.status == 429)
        #expect(try third.message() == "Rate limit exceeded. Retry after 1 second.")
    }

    @Test func rejectedAuthStillCountsAgainstTheBucketLikeAGlobalGuard() throws {
        let h = BackendHarness(StagingConfiguration(limits: StagingLimits(sdk: .init(limit: 1, windowSeconds: 60))))
        #expect(try h.sdk("/sdk/session", ["deviceId": "x"]).status == 400)
        #expect(try h.session("device-0001").status == 429)
    }

    @Test func slidingLogFreesAsOldHitsAge() throws {
        let h = BackendHarness(
            StagingConfiguration(
                limits: StagingLimits(algorithm: .slidingLog, match: .init(limit: 2, windowSeconds: 10))))
        #expect(try h.match(iosMatchBody()).status == 201)  // t = 0
        h.time.advance(6)
        #expect(try h.match(iosMatchBody()).status == 201)  // t = 6
        h.time.advance(1)
        let limited = try h.match(iosMatchBody())  // t = 7: oldest accepted hit ages out at t = 10
        #expect(try limited.message() == "Rate limit exceeded. Retry after 3 seconds.")
        h.time.advance(3)
        #expect(try h.match(iosMatchBody()).status == 201)  // t = 10
        // A fixed window opened at t = 0 would have freed at t = 10 too, but the sliding log
        // still holds the t = 6 hit and t = 10 one: full until t = 16.
        h.time.advance(1)
        #expect(try h.match(iosMatchBody()).message() == "Rate limit exceeded. Retry after 5 seconds.")
    }

    @Test func fixedWindowOpensAtFirstHitNotOnAGrid() throws {
        let time = VirtualTime(1_000_000.7)
        let h = BackendHarness(
            StagingConfiguration(limits: StagingLimits(match: .init(limit: 1, windowSeconds: 60))), time: time)
        _ = try h.match(iosMatchBody())
        time.advance(59.9)
        #expect(try h.match(iosMatchBody()).message() == "Rate limit exceeded. Retry after 1 second.")
        time.advance(0.1)
        #expect(try h.match(iosMatchBody()).status == 201)
    }

    @Test func limitsCanBeTurnedOffAndChangedWhileRunning() throws {
        let h = BackendHarness(StagingConfiguration(limits: StagingLimits(enabled: false)))
        for _ in 0..<100 { #expect(try h.match(iosMatchBody()).status == 201) }
        h.backend.setLimits(StagingLimits(match: .init(limit: 1, windowSeconds: 5)))
        #expect(try h.match(iosMatchBody()).status == 201)
        #expect(try h.match(iosMatchBody()).status == 429)
    }
}
