import Foundation
import OptoLinkHTTP
import OptoLinkStaging
import Testing

/// The device registry's idle window (issue 12): every reinstall brings a new SDK `deviceId` and
/// the old one never comes back, so the registry must forget a device once it has been idle for
/// `deviceIdleSeconds`, whichever route registered it, and must keep it while it is still seen.
/// All in virtual time.
@Suite struct DeviceWindowTests {
    static func harness(idle: Double) -> BackendHarness {
        var configuration = StagingConfiguration(trustForwardedFor: true, deviceIdleSeconds: idle)
        configuration.limits.enabled = false
        return BackendHarness(configuration)
    }

    @Test("a device idle for exactly its window is kept; one idle a second longer is evicted at the next sweep")
    func windowBoundary() throws {
        let h = Self.harness(idle: 400)
        #expect(try h.session("device-edge-a").status == 200)
        h.time.advance(1)
        #expect(try h.session("device-edge-b").status == 200)
        // 400 s after device b's check-in (401 s after a's), a sighting sweeps (one sweep per 100 s is due).
        h.time.advance(400)
        #expect(try h.session("device-sweeper").status == 200)
        #expect(h.backend.devices.isKnown("device-edge-b"))
        #expect(!h.backend.devices.isKnown("device-edge-a"))
        #expect(h.backend.devices.evicted == 1)
        // The evicted device is unknown to identity and events (404, as before its first session).
        #expect(try h.event("device-edge-a").status == 404)
        #expect(try h.event("device-edge-b").status == 200)
    }

    @Test("devices registered by /match, by /data?deviceId= and bound by /sdk/identity are evicted alike")
    func everyRegisteringRouteIsEvicted() throws {
        let h = Self.harness(idle: 300)
        #expect(try h.match(iosMatchBody(deviceId: "device-by-match")).status == 201)
        #expect(try h.respond("GET", "/acme/promo/data?deviceId=device-by-data").status == 200)
        #expect(try h.session("device-bound").status == 200)
        let bind = ["deviceId": "device-bound", "externalId": "user-42"]
        #expect(try h.sdk("/sdk/identity", bind).status == 200)
        #expect(h.backend.retained().devices == 3)
        // Kept before the window ends, whatever registered them.
        h.time.advance(299)
        #expect(try h.session("device-sweeper-1").status == 200)
        #expect(h.backend.retained().devices == 4)
        // Past it, the next due sweep forgets all three.
        h.time.advance(76)
        #expect(try h.session("device-sweeper-2").status == 200)
        #expect(h.backend.retained().devices == 2)
        #expect(!h.backend.devices.isKnown("device-by-match"))
        #expect(!h.backend.devices.isKnown("device-by-data"))
        // The binding went with the device: a new session and the same identity is not a rebind.
        #expect(try h.session("device-bound").status == 200)
        let answer = try h.sdk("/sdk/identity", bind)
        let body = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
        #expect(body?["rebound"] as? Bool == false)
    }

    @Test("an event, an identity call or a /data lookup keeps a device: only idleness evicts")
    func everySightingRefreshes() throws {
        let h = Self.harness(idle: 200)
        #expect(try h.session("device-active").status == 200)
        for round in 0..<12 {
            h.time.advance(150)
            switch round % 3 {
            case 0: #expect(try h.event("device-active").status == 200)
            case 1: #expect(try h.sdk("/sdk/identity/clear", ["deviceId": "device-active"]).status == 200)
            default: #expect(try h.respond("GET", "/acme/promo/data?deviceId=device-active").status == 200)
            }
        }
        #expect(h.backend.devices.isKnown("device-active"))
        #expect(h.backend.devices.evicted == 0)
    }

    @Test("reinstall churn (a new deviceId every 2 s for 20 windows): the registry holds about one window, not twenty")
    func reinstallChurnStaysFlat() throws {
        let idle = 120.0
        let h = Self.harness(idle: idle)
        var counts: [Int] = []
        var install = 0
        for _ in 0..<20 {
            for _ in 0..<60 {
                install += 1
                #expect(try h.session("install-\(install)").status == 200)
                h.time.advance(2)
            }
            counts.append(h.backend.retained().devices)
        }
        // 60 installs per window: at most a window plus one sweep period (30 s = 15 installs) of them.
        #expect(counts.allSatisfy { $0 <= 60 + 15 + 1 }, "\(counts)")
        #expect(h.backend.devices.evicted >= install - 76)
    }
}

/// The rate limiter's retired windows (issue 12): every (client IP, window) pair with a hit leaves
/// one window behind when its key is evicted; a long run keeps only the latest
/// ``RateLimiter/maxRetiredWindows`` of them per bucket class, and their totals whole.
@Suite struct RetiredWindowTests {
    @Test(
        "20,000 one-hit IPs on /data's 1 s window, fixed window and sliding log: retired windows stay capped, totals whole",
        arguments: [StagingRateLimitAlgorithm.fixedWindow, .slidingLog])
    func retiredWindowsAreCapped(algorithm: StagingRateLimitAlgorithm) {
        var limits = StagingLimits()
        limits.algorithm = algorithm
        let limiter = RateLimiter(limits: limits)
        let cap = RateLimiter.maxRetiredWindows
        var most = 0
        for index in 0..<20_000 {
            _ = limiter.hit(.data, key: "10.0.\(index / 250).\(index % 250)", now: 1_000 + Double(index) * 0.5)
            most = max(most, limiter.retiredWindowCount)
        }
        #expect(most <= 2 * cap, "\(most)")
        // Keys idle for two windows went (about the last 2 s of IPs are still held).
        #expect(limiter.keyCount <= 8, "\(limiter.keyCount)")
        let row = limiter.snapshot { _, key in key }.first { $0.bucket == .data && $0.key == RateLimiter.evictedKey }
        #expect(row?.windows.count == cap)
        #expect((row?.accepted ?? 0) + limiter.keyCount == 20_000)
        // The latest windows are the ones kept.
        #expect((row?.windows.map(\.start).max() ?? 0) > 1_000 + 19_000 * 0.5)
    }

    @Test("a key hit again within two windows is not retired: its windows stay with it")
    func activeKeyIsNotRetired() {
        let limiter = RateLimiter(limits: StagingLimits())
        for second in 0..<600 {
            _ = limiter.hit(.data, key: "198.51.100.60", now: Double(second) * 1.5)
        }
        #expect(limiter.keyCount == 1)
        #expect(limiter.retiredWindowCount == 0)
        let row = limiter.snapshot { _, key in key }.first { $0.key == "198.51.100.60" }
        #expect(row?.windows.count == RateLimiter.maxWindows)
    }
}
