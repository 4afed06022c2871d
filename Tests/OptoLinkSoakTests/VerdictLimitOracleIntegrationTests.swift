import Foundation
import OptoLink
import OptoLinkStaging
import Testing

@testable import OptoLinkSoak

/// The limit oracle against the emulator: paced streams drive each bucket past its limit
/// (/match from two IPs, events per key, the shared session + identity bucket). An emulator
/// enforcing the declared limits is reported exact; one configured 10% too lenient is caught,
/// and the count of passes beyond the limit equals the emulator's own window counters.
@Suite(.timeLimit(.minutes(1)))
struct VerdictLimitOracleIntegrationTests {
    static let declared = VerdictsConfiguration(limits: [
        "match": DeclaredLimit(limit: 10, windowSeconds: 1, scope: .ip),
        "events": DeclaredLimit(limit: 10, windowSeconds: 1, scope: .key),
        "session_identity": DeclaredLimit(limit: 10, windowSeconds: 1, scope: .key, shared: true),
    ])

    static func limits(_ limit: Int) -> StagingLimits {
        let rule = StagingRateLimitRule(limit: limit, windowSeconds: 1)
        return StagingLimits(match: rule, data: .init(limit: 100_000, windowSeconds: 1), sdk: rule, events: rule)
    }

    /// Calls `body` every `interval` seconds, `count` times, without waiting for earlier calls (open model).
    static func paced(count: Int, interval: Double, _ body: @escaping @Sendable (Int) async -> Void) async {
        let clock = ContinuousClock()
        let start = clock.now
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                try? await clock.sleep(until: start.advanced(by: .seconds(interval * Double(index))))
                group.addTask { await body(index) }
            }
        }
    }

    /// Per declared bucket name, `perWindow` summed over the emulator's own window counters.
    static func serverTruth(_ run: VerdictRun, _ perWindow: (StagingWindowCounter) -> Int) -> [String: Int] {
        let counters = run.backend.counters().buckets
        let names: [(String, StagingBucketClass)] = [("match", .match), ("events", .events), ("session_identity", .sdk)]
        return Dictionary(uniqueKeysWithValues: names.map { name, bucket in
            (name, counters.filter { $0.bucket == bucket }.flatMap(\.windows).reduce(0) { $0 + perWindow($1) })
        })
    }

    /// Drives all four streams for 2.5 s at 20 calls/s each, no retries (maxRetries 0).
    static func driveBuckets(_ run: VerdictRun) async {
        let devices = await startDevices(run, count: 4, ip: { "10.1.0.\($0)" })
        let match1 = devices[0]
        let match2 = devices[1]
        let events = devices[2]
        let identity = devices[3]
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await paced(count: 50, interval: 0.05) { _ in _ = try? await match1.resolveDeferredLink() } }
            group.addTask { await paced(count: 50, interval: 0.05) { _ in _ = try? await match2.resolveDeferredLink() } }
            group.addTask {
                await paced(count: 50, interval: 0.05) { index in
                    await VerdictRun.trackEvent(events, device: 3, sequence: index)
                }
            }
            group.addTask {
                await paced(count: 50, interval: 0.05) { index in
                    if index.isMultiple(of: 2) {
                        try? await identity.setIdentity(externalId: "user-\(index)")
                    } else {
                        try? await identity.clearIdentity()
                    }
                }
            }
        }
    }

    @Test func exactEnforcementIsReportedExact() async throws {
        let run = try VerdictRun(limits: Self.limits(10), maxRetries: 0)
        await Self.driveBuckets(run)
        let (report, metrics, _) = try run.verdicts(Self.declared)
        for name in ["match", "events", "session_identity"] {
            let bucket = try #require(report.limits.buckets[name])
            #expect(bucket.enforcedExactly, "\(name): \(bucket)")
            #expect(bucket.tooLenient == 0)
            #expect(bucket.tooStrict == 0)
            #expect(bucket.wrongN == 0)
            #expect(bucket.wrongMessage == 0)
            #expect(bucket.windows >= 3)
        }
        #expect(report.limits.buckets["match"]?.keys == 4)  // two streams + two devices' first /match
        #expect(metrics["limits.too_lenient"] == 0)
        #expect(metrics["limits.too_strict"] == 0)
    }

    @Test func anEmulatorTenPercentTooLenientIsCaught() async throws {
        let run = try VerdictRun(limits: Self.limits(11), maxRetries: 0)
        await Self.driveBuckets(run)
        let (report, metrics, _) = try run.verdicts(Self.declared)
        // The emulator's own windows say how many hits passed beyond the declared 10.
        let expected = Self.serverTruth(run) { max(0, $0.accepted - 10) }
        for (name, count) in expected {
            #expect(count >= 2, "\(name) was not driven past the limit")
            #expect(report.limits.buckets[name]?.tooLenient == count, "\(name)")
            #expect(report.limits.buckets[name]?.enforcedExactly == false)
        }
        #expect(metrics["limits.too_lenient"] == Double(expected.values.reduce(0, +)))
        let result = try #require(Thresholds.evaluate(["limits.match.too_lenient == 0"], metrics: metrics).first)
        #expect(!result.passed)
    }

    @Test func anEmulatorTooStrictIsCaught() async throws {
        // The emulator allows 9 per window where 10 are declared: in every window it exercised,
        // exactly one 429 (the 10th hit) came before the declared limit.
        let run = try VerdictRun(limits: Self.limits(9), maxRetries: 0)
        await Self.driveBuckets(run)
        let (report, metrics, _) = try run.verdicts(Self.declared)
        let truth = Self.serverTruth(run) { $0.rejected > 0 ? 1 : 0 }
        for (name, windows) in truth {
            let bucket = try #require(report.limits.buckets[name])
            #expect(bucket.tooStrict == windows, "\(name) \(bucket.tooStrict) of \(windows), ambiguous \(bucket.ambiguous)")
            #expect(bucket.tooLenient == 0)
            #expect(!bucket.enforcedExactly)
        }
        #expect((metrics["limits.too_strict"] ?? 0) >= 3)
    }
}

/// The same streams against the emulator's sliding log.
@Suite(.timeLimit(.minutes(1)))
struct VerdictSlidingWindowIntegrationTests {
    static func limits(_ limit: Int) -> StagingLimits {
        var limits = VerdictLimitOracleIntegrationTests.limits(limit)
        limits.algorithm = .slidingLog
        return limits
    }

    static var declared: VerdictsConfiguration {
        var configuration = VerdictLimitOracleIntegrationTests.declared
        configuration.algorithm = .slidingWindow
        return configuration
    }

    @Test func exactSlidingLogIsReportedExact() async throws {
        let run = try VerdictRun(limits: Self.limits(10), maxRetries: 0)
        await VerdictLimitOracleIntegrationTests.driveBuckets(run)
        let (report, _, _) = try run.verdicts(Self.declared)
        for name in ["match", "events", "session_identity"] {
            let bucket = try #require(report.limits.buckets[name])
            #expect(bucket.enforcedExactly, "\(name): \(bucket)")
        }
    }

    @Test func aSlidingLogTenPercentTooLenientIsCaught() async throws {
        let run = try VerdictRun(limits: Self.limits(11), maxRetries: 0)
        await VerdictLimitOracleIntegrationTests.driveBuckets(run)
        let (report, _, _) = try run.verdicts(Self.declared)
        // Truth from the ledger's server-side arrival times of the accepted events: passes with
        // 10 or more passes in the preceding second.
        let arrivals = run.backend.ledger().filter { $0.endpoint == "events" }.map(\.arrivedAt).sorted()
        let truth = arrivals.enumerated().filter { index, time in
            arrivals[..<index].filter { $0 > time - 1 }.count >= 10
        }.count
        let events = try #require(report.limits.buckets["events"])
        #expect(truth >= 2)
        #expect(events.tooLenient >= 1)
        #expect(events.tooLenient <= truth)
        #expect(events.tooStrict == 0)
        for name in ["match", "session_identity"] {
            #expect((report.limits.buckets[name]?.tooLenient ?? 0) >= 1, "\(name)")
        }
    }
}
