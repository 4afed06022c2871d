import Foundation
import OptoLink
import OptoLinkStaging
import Testing

import OptoLinkSoak
import SoakVerdicts

/// Every verdict shown able to fail — with exact counts — against the emulator, with a
/// deliberately misbehaving client through the SDK's seams, and shown silent with the
/// well-behaved SDK. In virtual time: every Retry-After and back-off is waited out exactly,
/// so "on time" does not depend on how loaded the machine is.
@Suite(.timeLimit(.minutes(1)))
struct VerdictIntegrationTests {
    static func eventsLimit(_ limit: Int, per seconds: Double) -> StagingLimits {
        var limits = VerdictRun.relaxedLimits
        limits.events = .init(limit: limit, windowSeconds: seconds)
        return limits
    }

    static func expect(events declared: String) throws -> VerdictsConfiguration {
        VerdictsConfiguration(limits: ["events": try DeclaredLimit(parsing: declared)])
    }

    @Test func wellBehavedClientObeysRetryAfterAndTheMatrix() async throws {
        // 6 devices, 4 events per 1 s: 2 events get a 429 with N = 1 and succeed on the retry.
        let run = try VerdictRun(limits: Self.eventsLimit(4, per: 1), stepping: true)
        let instances = await startDevices(run, count: 6)
        await sendOneEventEach(instances)
        let (report, metrics, _) = try run.verdicts(try Self.expect(events: "4/1s per key"))
        #expect(metrics["backoff.429.checked"] == 2)
        #expect(metrics["backoff.early"] == 0)
        #expect(metrics["backoff.429.on_time"] == 2)
        #expect(metrics["retry.violations"] == 0)
        #expect(metrics["events.delivered_once"] == 6)
        #expect(metrics["events.duplicated"] == 0)
        #expect(metrics["events.lost"] == 0)
        #expect(metrics["session.delivered_once"] == 6)
        #expect(metrics["session.duplicated"] == 0)
        #expect(metrics["limits.events.too_lenient"] == 0)
        #expect(metrics["limits.events.too_strict"] == 0)
        #expect(metrics["limits.events.wrong_n"] == 0)
        #expect(report.limits.buckets["events"]?.enforcedExactly == true)
        let failed = Thresholds.evaluate(
            ["backoff.early == 0", "retry.violations == 0", "events.duplicated == 0", "limits.too_lenient == 0"],
            metrics: metrics
        ).filter { !$0.passed }
        #expect(failed.isEmpty, "\(failed.map(\.line))")
    }

    @Test func ignoringRetryAfterIsCaughtAsEarlyRetries() async throws {
        // 4 events per 10 s: 2 of 6 devices are rejected on all 3 attempts; each retries after 50 ms.
        let run = try VerdictRun(limits: Self.eventsLimit(4, per: 10), stepping: true)
        let instances = await startDevices(run, count: 6, policy: IgnoresRetryAfterPolicy())
        await sendOneEventEach(instances)
        let (report, metrics, _) = try run.verdicts(try Self.expect(events: "4/10s per key"))
        #expect(metrics["backoff.429.early"] == 4)
        #expect(metrics["backoff.early"] == 4)
        #expect(metrics["backoff.on_time"] == 0)
        #expect(report.backoff.worstEarly.count == 4)
        #expect(report.backoff.worstEarly.allSatisfy { $0.expectedSeconds >= 9 && $0.gapSeconds < 1 })
        #expect(metrics["retry.violations"] == 0)  // retrying a 429 is allowed; only the wait is wrong
        #expect(metrics["events.not_delivered"] == 2)
        #expect(metrics["events.delivered_once"] == 4)
        #expect(report.limits.buckets["events"]?.enforcedExactly == true)
        #expect(metrics["limits.events.rejected"] == 6)
        let result = try #require(Thresholds.evaluate(["backoff.early == 0"], metrics: metrics).first)
        #expect(!result.passed)
        #expect(result.observed == 4)
    }

    @Test(arguments: [false, true])
    func retryingAnEvent5xxIsCaughtAndDoubleCounts(misbehaving: Bool) async throws {
        // Every event write commits, then answers 500.
        let faults = StagingFaults(endpoints: ["events": [StagingFaultRule(kind: .errorAfterCommit, rate: 1)]])
        let run = try VerdictRun(faults: faults, stepping: true)
        let policy: any OptoLinkRetryPolicy = misbehaving ? RetriesTelemetry5xxPolicy() : OptoLinkContractRetryPolicy()
        let instances = await startDevices(run, count: 3, policy: policy)
        await sendOneEventEach(instances)
        let (_, metrics, _) = try run.verdicts()
        if misbehaving {
            #expect(metrics["retry.violations.retried_5xx_telemetry"] == 6)
            #expect(metrics["retry.violations"] == 6)
            #expect(metrics["events.duplicated"] == 3)
            #expect(metrics["events.duplicate_writes"] == 6)
            #expect(metrics["events.landed_unknown"] == 0)
        } else {
            #expect(metrics["retry.violations"] == 0)
            #expect(metrics["events.duplicated"] == 0)
            #expect(metrics["events.landed_unknown"] == 3)
        }
        #expect(metrics["events.lost"] == 0)
        #expect(metrics["backoff.early"] == 0)
    }

    @Test func aMiddlewareThatDuplicatesWritesIsCaught() async throws {
        let run = try VerdictRun(stepping: true)
        let instances = await startDevices(run, count: 3, middlewares: [DuplicatesEventWritesMiddleware()])
        await sendOneEventEach(instances)
        let (_, metrics, _) = try run.verdicts()
        #expect(metrics["events.duplicated"] == 3)
        #expect(metrics["events.duplicate_writes"] == 3)
        #expect(metrics["events.delivered_once"] == 0)
        #expect(metrics["retry.violations"] == 0)  // the recorder saw one attempt per call
        #expect(metrics["session.duplicated"] == 0)
    }

    @Test(arguments: [false, true])
    func aMissingRetryOnMatch5xxIsCaught(misbehaving: Bool) async throws {
        // Every /match answers 503 before anything is written.
        let faults = StagingFaults(endpoints: ["match": [StagingFaultRule(kind: .errorBeforeCommit, rate: 1)]])
        let run = try VerdictRun(faults: faults, stepping: true)
        _ = await startDevices(
            run, count: 3, policy: misbehaving ? NeverRetriesPolicy() : OptoLinkContractRetryPolicy())
        // One more call after the others so no match call is judged as cut short by the run's end.
        let late = run.device(9)
        await late.start()
        await late.waitForBackgroundWork()
        let (report, metrics, _) = try run.verdicts()
        if misbehaving {
            #expect(metrics["retry.violations.missing_retry"] == 3)
            #expect(report.retries.attemptsPerCall["match"]?["1"] == 3)
        } else {
            #expect(metrics["retry.violations"] == 0)
            #expect(metrics["backoff.exponential.checked"] == 8)  // 4 calls × 2 retries (0.5 s, 1 s)
            #expect(metrics["backoff.exponential.early"] == 0)
            #expect(report.retries.attemptsPerCall["match"]?["3"] == 4)
        }
    }

    @Test func a429WithoutNIsAWrongMessageAndTheClientFallsBackToTheTable() async throws {
        // A proxy strips N from every 429; 4 events per 10 s, 6 devices: 2 calls rejected thrice.
        let run = try VerdictRun(limits: Self.eventsLimit(4, per: 10), stepping: true)
        let instances = await startDevices(
            run, count: 6, middlewares: [Rewrites429Middleware(message: "Too Many Requests")])
        await sendOneEventEach(instances)
        let (_, metrics, _) = try run.verdicts(try Self.expect(events: "4/10s per key"))
        #expect(metrics["limits.events.wrong_message"] == 6)
        #expect(metrics["limits.events.wrong_n"] == 0)
        #expect(metrics["backoff.429.without_n"] == 4)
        #expect(metrics["backoff.exponential.on_time"] == 4)  // 0.5 s, then 1 s
        #expect(metrics["backoff.early"] == 0)
    }

    @Test func aWrongNIsCaught() async throws {
        // A proxy rewrites N to 0; the client obeys it (on time), the oracle flags every 429.
        let run = try VerdictRun(limits: Self.eventsLimit(4, per: 10), stepping: true)
        let rewrite = Rewrites429Middleware(message: "Rate limit exceeded. Retry after 0 seconds.")
        let instances = await startDevices(run, count: 6, middlewares: [rewrite])
        await sendOneEventEach(instances)
        let (_, metrics, _) = try run.verdicts(try Self.expect(events: "4/10s per key"))
        #expect(metrics["limits.events.wrong_n"] == 6)
        #expect(metrics["limits.events.wrong_message"] == 0)
        #expect(metrics["backoff.429.on_time"] == 4)
        #expect(metrics["backoff.early"] == 0)
    }
}
