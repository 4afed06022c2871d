import Foundation
import OptoLink
import Testing

import OptoLinkSoak

/// In virtual time (``EndToEndRun/makeVirtualRun(on:_:)``): the emulator's 2 s windows and the
/// clients' `Retry-After` waits run on one ``SteppingClock``, so "waited at least N seconds" is
/// checked exactly, without waiting.
@Suite("End to end: 429 and Retry-After", .serialized, .timeLimit(.minutes(1)))
struct EndToEndRateLimitTests {
    @Test("devices behind one NAT IP hit the /match limit; 429s carry N and retries wait at least N seconds")
    func matchLimitFromOneIP() async throws {
        let devices = 8
        let e2e = try EndToEndRun(
            profile: """
                {"name": "rl", "seed": 5,
                 "devices": {"count": \(devices), "sharedNAT": 1, "sharedNATAddress": "198.51.100.77"},
                 "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}]}],
                 "load": {"model": "open", "startRate": 40, "stages": [{"duration": 0.2, "target": 40}], "grace": 15},
                 "sdk": {"timeout": 3, "maxRetries": 2},
                 "backend": {"limits": {"match": {"limit": 3, "windowSeconds": 2},
                                        "session_identity": {"limit": 100000, "windowSeconds": 60}}},
                 "expect": {"limits": {"match": "3/2s per ip"},
                            "thresholds": ["backoff.early == 0", "limits.match.too_lenient == 0", "limits.match.too_strict == 0"]}}
                """)
        let clock = SteppingClock()
        let result = await e2e.makeVirtualRun(on: clock).execute(driving: clock)
        #expect(result.exitCode == 0, "\(result.summary?.thresholds.map(\.line) ?? e2e.log)")
        let attempts = try e2e.attempts()
        let matches = attempts.filter { $0.endpoint == .match }
        #expect(matches.filter { $0.attempt == 1 }.count == devices)
        #expect(matches.allSatisfy { $0.clientIP == "198.51.100.77" })
        let limited = matches.filter { $0.status == 429 }
        #expect(!limited.isEmpty)
        #expect(limited.allSatisfy { ($0.retryAfterSeconds ?? 0) >= 1 })
        // Each retry after a 429 starts no earlier than the 429's end plus N seconds.
        for rejected in limited {
            guard
                let retry = matches.first(where: {
                    $0.device == rejected.device && $0.launch == rejected.launch && $0.callId == rejected.callId
                        && $0.attempt == rejected.attempt + 1
                })
            else { continue }
            // Exact on the virtual clock (2 µs for the CSV rounding of both times): never early.
            #expect(retry.actualStart - rejected.end >= Double(rejected.retryAfterSeconds ?? 0) - 2e-6)
            #expect(retry.intendedStart == retry.actualStart)
        }
        // The emulator saw exactly what the client recorded.
        let counters = try #require(e2e.server).counters()
        #expect(counters.count("match", status: "429") == limited.count)
        #expect(counters.endpoints["match"]?.values.reduce(0, +) == matches.count)
    }

    @Test("a --ledger file is read, and a malformed one is named")
    func ledgerFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let good = directory.appendingPathComponent("ledger.json")
        try Data(
            #"[{"sequence":1,"arrivedAt":1.5,"endpoint":"events","deviceId":"dev-00000001","apiKeySuffix":"client","properties":{"opl_corr":"r:d000001:1"}}]"#
                .utf8
        ).write(to: good)
        #expect(try RemoteBackend.readLedger(good).first?.properties?["opl_corr"] == "r:d000001:1")
        let bad = directory.appendingPathComponent("bad.json")
        try Data(#"[{"sequence":"one"}]"#.utf8).write(to: bad)
        #expect(throws: SoakProfileError.self) { try RemoteBackend.readLedger(bad) }
        do {
            _ = try RemoteBackend.readLedger(bad)
        } catch {
            #expect("\(error)".contains("[0].sequence"))
        }
    }
}
