import Foundation
import OptoLink
import OptoLinkHTTP
import OptoLinkStaging
import Testing

/// The backend's state stays exact under concurrent callers (limiter, ledger, clicks).
@Suite(.timeLimit(.minutes(1))) struct ConcurrencyTests {
    @Test func limiterAdmitsExactlyTheLimitUnderContention() async throws {
        let h = BackendHarness(StagingConfiguration(limits: StagingLimits(match: .init(limit: 100, windowSeconds: 60))))
        let statuses = await withTaskGroup(of: [Int].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (0..<50).map { _ in
                        (try? h.match(iosMatchBody()).status) ?? 0
                    }
                }
            }
            var all: [Int] = []
            for await part in group { all += part }
            return all
        }
        #expect(statuses.filter { $0 == 201 }.count == 100)
        #expect(statuses.filter { $0 == 429 }.count == 300)
        let bucket = try #require(h.backend.counters().buckets.first)
        #expect(bucket.accepted == 100 && bucket.rejected == 300)
    }

    @Test func eachClickIsConsumedByExactlyOneMatch() async throws {
        let h = BackendHarness(StagingConfiguration(limits: StagingLimits(enabled: false)))
        var tokens: [String] = []
        for _ in 0..<50 { tokens.append(try h.click()) }
        let frozen = tokens
        let hits = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    // Every worker tries every token; a consumed token falls down the ladder and
                    // may take another click by fingerprint. Either way each click goes once.
                    frozen.reduce(0) { count, token in
                        let body = iosMatchBody(deviceId: "device-\(worker)-0000", token: token)
                        let matched = (try? h.match(body).json()["matched"] as? Bool) ?? false
                        return count + (matched ? 1 : 0)
                    }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(hits == 50)
        #expect(try h.match(iosMatchBody()).json()["matched"] as? Bool == false)
    }

    @Test func manyVirtualDevicesOverSocketsLandEveryWriteOnce() async throws {
        var configuration = StagingConfiguration(limits: StagingLimits(enabled: false))
        configuration.trustForwardedFor = true
        try await withEmulator(configuration) { e in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<40 {
                    group.addTask {
                        let device = e.device(middlewares: [ForwardedFor(ip: "10.1.0.\(i)")])
                        await device.sdk.start()
                        await device.sdk.waitForBackgroundWork()
                        for n in 0..<3 {
                            try await device.sdk.trackEvent(name: "tick", properties: ["opl_corr": "run:\(i):\(n)"])
                        }
                    }
                }
                try await group.waitForAll()
            }
            let ledger = e.server.ledger()
            #expect(ledger.filter { $0.endpoint == "session" }.count == 40)
            let corr = ledger.compactMap { $0.properties?["opl_corr"] }
            #expect(corr.count == 120)
            #expect(Set(corr).count == 120)
            #expect(ledger.map(\.sequence) == Array(1...160))
            #expect(e.server.counters().count("match", status: "201") == 40)
        }
    }
}
