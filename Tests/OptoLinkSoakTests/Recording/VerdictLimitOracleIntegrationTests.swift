import Foundation
import OptoLink
import OptoLinkStaging
import Testing

import OptoLinkSoak
import SoakVerdicts

/// The limit oracle against the emulator's limiter, with real SDK instances, in virtual time
/// (the emulator's clock and the attempt rows share a test-controlled clock, so the result does
/// not depend on machine load; the real-time path is covered by `VerdictEndToEndTests`). Paced
/// streams drive each bucket past its limit (/match from two IPs, events per key, the shared
/// session + identity bucket). An emulator enforcing the declared limits is reported exact; one
/// configured 10% too lenient, or one too strict, is caught with exactly its own window counts.
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

    /// Per declared bucket name, `perWindow` summed over the emulator's own window counters.
    static func serverTruth(_ run: VerdictRun, _ perWindow: (StagingWindowCounter) -> Int) -> [String: Int] {
        let counters = run.backend.counters().buckets
        let names: [(String, StagingBucketClass)] = [
            ("match", .match), ("events", .events), ("session_identity", .sdk),
        ]
        return Dictionary(
            uniqueKeysWithValues: names.map { name, bucket in
                (name, counters.filter { $0.bucket == bucket }.flatMap(\.windows).reduce(0) { $0 + perWindow($1) })
            })
    }

    /// Drives four streams in virtual time, 36 calls each, one every 70 ms from 0.668 s (chosen
    /// so no call falls within 18 ms of a 1 s window's close, beyond the oracle's edge tolerance,
    /// counting the devices' first /match and session at 0 s), no retries: /match from two IPs,
    /// events per key, identity/clear in the shared bucket.
    static func driveBuckets(_ run: VerdictRun, time: VirtualRunTime) async {
        let devices = await startDevices(run, count: 4, ip: { "10.1.0.\($0)" })
        var steps: [(at: Double, stream: Int, index: Int)] = []
        for stream in 0..<4 {
            for index in 0..<36 { steps.append((0.668 + Double(stream) * 0.011 + Double(index) * 0.07, stream, index)) }
        }
        for step in steps.sorted(by: { $0.at < $1.at }) {
            time.set(step.at)
            switch step.stream {
            case 0, 1: _ = try? await devices[step.stream].resolveDeferredLink()
            case 2: await VerdictRun.trackEvent(devices[2], device: 3, sequence: step.index)
            default:
                if step.index.isMultiple(of: 2) {
                    try? await devices[3].setIdentity(externalId: "user-\(step.index)")
                } else {
                    try? await devices[3].clearIdentity()
                }
            }
        }
    }

    @Test func exactEnforcementIsReportedExact() async throws {
        let time = VirtualRunTime()
        let run = try VerdictRun(limits: Self.limits(10), maxRetries: 0, virtualTime: time)
        await Self.driveBuckets(run, time: time)
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
        let time = VirtualRunTime()
        let run = try VerdictRun(limits: Self.limits(11), maxRetries: 0, virtualTime: time)
        await Self.driveBuckets(run, time: time)
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
        let time = VirtualRunTime()
        let run = try VerdictRun(limits: Self.limits(9), maxRetries: 0, virtualTime: time)
        await Self.driveBuckets(run, time: time)
        let (report, metrics, _) = try run.verdicts(Self.declared)
        let truth = Self.serverTruth(run) { $0.rejected > 0 ? 1 : 0 }
        for (name, windows) in truth {
            let bucket = try #require(report.limits.buckets[name])
            #expect(
                bucket.tooStrict == windows, "\(name) \(bucket.tooStrict) of \(windows), ambiguous \(bucket.ambiguous)")
            #expect(bucket.tooLenient == 0)
            #expect(!bucket.enforcedExactly)
        }
        #expect((metrics["limits.too_strict"] ?? 0) >= 3)
    }
}

/// The same streams (virtual time) against the emulator's sliding log.
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
        let time = VirtualRunTime()
        let run = try VerdictRun(limits: Self.limits(10), maxRetries: 0, virtualTime: time)
        await VerdictLimitOracleIntegrationTests.driveBuckets(run, time: time)
        let (report, _, _) = try run.verdicts(Self.declared)
        for name in ["match", "events", "session_identity"] {
            let bucket = try #require(report.limits.buckets[name])
            #expect(bucket.enforcedExactly, "\(name): \(bucket)")
        }
    }

    @Test func aSlidingLogTenPercentTooLenientIsCaught() async throws {
        let time = VirtualRunTime()
        let run = try VerdictRun(limits: Self.limits(11), maxRetries: 0, virtualTime: time)
        await VerdictLimitOracleIntegrationTests.driveBuckets(run, time: time)
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
        #expect(events.tooLenient == truth)
        #expect(events.tooStrict == 0)
        for name in ["match", "session_identity"] {
            #expect((report.limits.buckets[name]?.tooLenient ?? 0) >= 1, "\(name)")
        }
    }
}
