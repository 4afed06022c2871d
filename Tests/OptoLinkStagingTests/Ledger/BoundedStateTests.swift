import Foundation
import OptoLinkHTTP
import OptoLinkStaging
import Synchronization
import Testing

/// The emulator's state stays bounded in a long run (issue 12): clicks expire at their TTL,
/// idle devices and limiter keys are evicted, the ledger streams to a JSON-lines file and pages
/// back from it. All in virtual time.
@Suite struct BoundedStateTests {
    static func config(clickTTL: Double = 86_400, deviceIdle: Double = 3_600) -> StagingConfiguration {
        var configuration = StagingConfiguration(trustForwardedFor: true, deviceIdleSeconds: deviceIdle)
        configuration.match.clickTTLSeconds = clickTTL
        return configuration
    }

    /// Streams `h`'s ledger to a new temporary JSON-lines file and returns its URL.
    static func streamLedger(_ h: BackendHarness) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).jsonl")
        try h.backend.streamLedger(to: url)
        return url
    }

    @Test("clicks older than their TTL are swept: the store holds about one TTL of clicks")
    func clicksExpireAtTheirTTL() throws {
        let h = BackendHarness(Self.config(clickTTL: 60))
        for _ in 0..<10 { _ = try h.click() }
        #expect(h.backend.retained().clicks == 10)
        h.time.advance(61)
        // The next click sweeps (at least once per TTL/4 of clock time): the 10 expired ones go.
        _ = try h.click()
        #expect(h.backend.retained().clicks == 1)
        // Clicks younger than the TTL stay.
        h.time.advance(30)
        _ = try h.click()
        #expect(h.backend.retained().clicks == 2)
    }

    @Test("a click TTL of 300 s: after 20 TTLs of steady clicking the store holds one TTL's worth, not twenty")
    func clickStoreIsFlatOverManyTTLs() throws {
        let h = BackendHarness(Self.config(clickTTL: 300))
        var counts: [Int] = []
        for _ in 0..<20 {
            for _ in 0..<30 {
                _ = try h.click()
                h.time.advance(10)
            }
            counts.append(h.backend.retained().clicks)
        }
        // 30 clicks per 300 s: never more than a TTL (plus one sweep period, 75 s) of them.
        #expect(counts.allSatisfy { $0 <= 31 + 8 }, "\(counts)")
        #expect((counts.suffix(10).max() ?? 0) <= (counts.prefix(5).max() ?? 0), "\(counts)")
    }

    @Test("devices idle past deviceIdleSeconds are evicted; an active one stays; a new session registers again")
    func idleDevicesAreEvicted() throws {
        let h = BackendHarness(Self.config(deviceIdle: 600))
        for index in 0..<50 { #expect(try h.session("device-\(index)").status == 200) }
        #expect(h.backend.retained().devices == 50)
        for _ in 0..<4 {
            h.time.advance(200)
            #expect(try h.session("device-keep").status == 200)
        }
        // 800 s later the 50 idle ones are gone; the one seen every 200 s stays.
        #expect(h.backend.retained().devices == 1)
        #expect(h.backend.devices.evicted == 50)
        #expect(try h.session("device-7").status == 200)
        #expect(try h.event("device-7").status == 200)
        #expect(h.backend.retained().devices == 2)
    }

    @Test("a deviceIdleSeconds that is not positive is a configuration problem naming the field")
    func deviceIdleMustBePositive() {
        let problems = Self.config(deviceIdle: 0).problems()
        #expect(problems.contains("deviceIdleSeconds must be positive"))
        #expect(throws: StagingConfigurationError.self) {
            _ = try StagingConfiguration.decode(Data(#"{"deviceIdleSeconds": -5}"#.utf8))
        }
    }

    @Test("limiter keys idle for two windows are evicted; their totals stay in one 'evicted keys' row")
    func idleLimiterKeysAreEvicted() throws {
        let limits = StagingLimits(match: .init(limit: 5, windowSeconds: 10))
        var configuration = Self.config()
        configuration.limits = limits
        let h = BackendHarness(configuration)
        var held: [Int] = []
        // 40 rounds of 10 s: each round 3 new IPs hit /match (6 hits each, one 429 each).
        for round in 0..<40 {
            for ip in 0..<3 {
                for _ in 0..<6 {
                    _ = try h.match(iosMatchBody(), headers: ["X-Forwarded-For": "198.51.\(round).\(ip)"])
                }
            }
            held.append(h.backend.retained().limiterKeys)
            h.time.advance(10)
        }
        // Keys of at most the last three rounds are held, however long the run.
        #expect(held.allSatisfy { $0 <= 9 }, "\(held)")
        let rows = h.backend.counters().buckets.filter { $0.bucket == .match }
        let evicted = try #require(rows.first { $0.key == RateLimiter.evictedKey })
        #expect(rows.reduce(0) { $0 + $1.accepted } == 40 * 3 * 5)
        #expect(rows.reduce(0) { $0 + $1.rejected } == 40 * 3 * 1)
        #expect(evicted.accepted > 0)
        // The evicted keys' windows are still there for a reader who sums excess per window.
        #expect(evicted.windows.count == evicted.accepted / 5)
    }

    @Test("a key hit again within two windows keeps its window history")
    func activeKeysKeepTheirWindows() throws {
        var configuration = Self.config()
        configuration.limits = StagingLimits(match: .init(limit: 2, windowSeconds: 5))
        let h = BackendHarness(configuration)
        for _ in 0..<6 {
            _ = try h.match(iosMatchBody(), headers: ["X-Forwarded-For": "203.0.113.9"])
            h.time.advance(6)
        }
        let row = try #require(h.backend.counters().buckets.first { $0.key.contains("203.0.113") })
        #expect(row.windows.count == 6)
        #expect(h.backend.retained().limiterKeys == 1)
    }

    @Test("the ledger streams to JSON lines: the file holds every entry, none stay in memory, pages read back")
    func ledgerFileRoundTripAndPaging() throws {
        var configuration = Self.config()
        configuration.limits.enabled = false
        let h = BackendHarness(configuration)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(try h.session("device-before").status == 200)
        try h.backend.streamLedger(to: url)
        // 2,500 events: more than two index strides (1,024) and several write buffers.
        for index in 0..<2_500 {
            #expect(try h.event("device-before", "e\(index)", properties: ["opl_corr": "r:d:\(index)"]).status == 200)
            h.time.advance(0.01)
        }
        #expect(h.backend.retained().ledgerInMemory == 0)
        #expect(h.backend.retained().ledgerTotal == 2_501)
        #expect(h.backend.flushLedger() == nil)
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2_501)
        let decoded = try lines.map { try JSONDecoder().decode(StagingLedgerEntry.self, from: Data($0.utf8)) }
        #expect(decoded.map(\.sequence) == Array(1...2_501))
        #expect(decoded[0].endpoint == "session")
        #expect(decoded[2_500].eventName == "e2499")
        // Pages: after a sequence, at most `limit`, across index strides; past the end: empty.
        #expect(h.backend.ledger(since: 0, limit: 3).map(\.sequence) == [1, 2, 3])
        #expect(h.backend.ledger(since: 1_023, limit: 3).map(\.sequence) == [1_024, 1_025, 1_026])
        #expect(h.backend.ledger(since: 2_047, limit: 2).map(\.sequence) == [2_048, 2_049])
        #expect(h.backend.ledger(since: 2_499, limit: 10).map(\.sequence) == [2_500, 2_501])
        #expect(h.backend.ledger(since: 2_501, limit: 10).isEmpty)
        #expect(h.backend.ledger(since: 100, limit: 0).isEmpty)
        #expect(h.backend.ledger() == decoded)
    }

    @Test("GET /__admin/ledger pages with since (or after) and limit, from the file")
    func adminLedgerPages() throws {
        let h = BackendHarness(Self.config())
        let url = try Self.streamLedger(h)
        defer { try? FileManager.default.removeItem(at: url) }
        for index in 0..<30 { _ = try h.session("device-\(index)") }
        for query in ["since=10&limit=5", "after=10&limit=5"] {
            let page = try h.respond("GET", "/__admin/ledger?\(query)")
            #expect(page.status == 200)
            let entries = try JSONDecoder().decode([StagingLedgerEntry].self, from: Data(page.body))
            #expect(entries.map(\.sequence) == [11, 12, 13, 14, 15], "\(query)")
        }
        let all = try JSONDecoder().decode(
            [StagingLedgerEntry].self, from: Data(try h.respond("GET", "/__admin/ledger").body))
        #expect(all.count == 30)
        // The largest `since` (it overflowed the file lookup and killed the server) is an empty page.
        for since in [Int.max, Int.max - 1] {
            let page = try h.respond("GET", "/__admin/ledger?since=\(since)")
            #expect(page.status == 200 && page.body == Array("[]".utf8), "\(since)")
        }
    }

    @Test("a reset truncates the ledger file and numbering starts again at 1")
    func resetTruncatesTheFile() throws {
        let h = BackendHarness(Self.config())
        let url = try Self.streamLedger(h)
        defer { try? FileManager.default.removeItem(at: url) }
        for index in 0..<5 { _ = try h.session("device-\(index)") }
        h.backend.reset()
        _ = try h.session("device-after")
        #expect(h.backend.ledger().map(\.sequence) == [1])
        #expect(h.backend.ledger().first?.deviceId == "device-after")
    }

    @Test("a ledger file in a missing directory cannot be created: the error says so, the ledger stays in memory")
    func unwritableLedgerFile() throws {
        let h = BackendHarness(Self.config())
        let url = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)/ledger.jsonl")
        #expect(throws: (any Error).self) { try h.backend.streamLedger(to: url) }
        _ = try h.session("device-1")
        #expect(h.backend.retained().ledgerInMemory == 1)
    }

    @Test("the ledger observer sees every entry as it is stored")
    func ledgerObserver() throws {
        let h = BackendHarness(Self.config())
        let seen = Mutex<[Int]>([])
        h.backend.observeLedger { entry in seen.withLock { $0.append(entry.sequence) } }
        for index in 0..<4 { _ = try h.session("device-\(index)") }
        #expect(seen.withLock { $0 } == [1, 2, 3, 4])
    }

    @Test("the ledger observer stays one call deep however many entries pass: 150,000 appends, each observed once")
    func ledgerObserverDoesNotGrowPerEntry() throws {
        // A closure kept as the bare value of a Mutex gained two thunks per read; at this count
        // the observer's call went deep enough to overflow a thread's stack (a soak died at 5 min).
        let ledger = StagingLedger()
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        try ledger.streamToFile(url)
        let seen = Mutex((count: 0, last: 0))
        ledger.observe { entry in seen.withLock { $0 = ($0.count + 1, entry.sequence) } }
        let appends = 150_000
        for index in 0..<appends {
            ledger.append(arrivedAt: Double(index), endpoint: .events, deviceId: "d", apiKey: "opl_sdk_abcdef")
        }
        #expect(seen.withLock { $0.count } == appends)
        #expect(seen.withLock { $0.last } == appends)
    }
}
