import Foundation
import OptoLink
import OptoLinkStaging
import Testing

import OptoLinkSoak
import SoakRecords
import SoakVerdicts

extension WholeRuns {
    /// The verdicts through the whole tool: `optolink-soak run Profiles/verdicts/rate-limits-short.json`
    /// (the real driver on its default native transport, the emulator over sockets), judged from the report.
    /// In virtual time: the run, the SDK instances and the emulator's limiter share one ``SteppingClock``,
    /// so every `Retry-After` wait and every 2 s window is exact and takes no real time.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct VerdictEndToEndTests {
        static func profileText(lenientBy factor: Double = 1) throws -> String {
            let url = ShippedProfiles.url("verdicts/rate-limits-short.json")
            var text = try String(contentsOf: url, encoding: .utf8)
            // Scale the emulator's limits (not the declared ones) for the lenient variant.
            for (limit, window) in [(10, 2), (20, 2), (40, 2)] {
                text = text.replacingOccurrences(
                    of: #""limit": \#(limit), "windowSeconds": \#(window) }"#,
                    with: #""limit": \#(Int((Double(limit) * factor).rounded())), "windowSeconds": \#(window) }"#)
            }
            return text
        }

        func summary(_ result: SoakRunResult) throws -> SoakSummary {
            try #require(result.summary, "no summary: \(result.error ?? "?")")
        }

        @Test func wellBehavedRunAgainstAnExactEmulatorPassesEveryVerdict() async throws {
            let run = try EndToEndRun(profile: try Self.profileText())
            let clock = SteppingClock()
            let result = await run.makeVirtualRun(on: clock).execute(driving: clock)
            let summary = try summary(result)
            let failed = summary.thresholds.filter { !$0.passed }.map(\.line)
            #expect(result.exitCode == 0, "\(failed)")
            let verdicts = try #require(summary.verdicts)
            for name in ["match", "events", "session_identity"] {
                let bucket = try #require(verdicts.limits.buckets[name])
                #expect(bucket.enforcedExactly, "\(name): \(bucket)")
            }
            #expect(verdicts.backoff.rateLimited.checked > 0)
            #expect(verdicts.reconciliation.available)
        }

        @Test func anEmulatorTenPercentTooLenientFailsTheRun() async throws {
            let run = try EndToEndRun(profile: try Self.profileText(lenientBy: 1.1))
            let clock = SteppingClock()
            let result = await run.makeVirtualRun(on: clock).execute(driving: clock)
            let summary = try summary(result)
            #expect(result.exitCode == 1)
            let threshold = try #require(summary.thresholds.first { $0.expression == "limits.too_lenient == 0" })
            #expect(!threshold.passed)
            let verdicts = try #require(summary.verdicts)
            let counters = try #require(run.server?.counters())
            // Each bucket's count lies between one and the emulator's own excess over the declared limit.
            for (name, bucket, declared) in [("match", StagingBucketClass.match, 10), ("events", .events, 40)] {
                let truth = counters.buckets.filter { $0.bucket == bucket }.flatMap(\.windows)
                    .reduce(0) { $0 + max(0, $1.accepted - declared) }
                let judged = try #require(verdicts.limits.buckets[name])
                #expect(truth >= 1, "\(name) was not driven past its limit")
                #expect(judged.tooLenient >= 1, "\(name)")
                #expect(judged.tooLenient <= truth, "\(name)")
            }
        }

        @Test func aClientIgnoringRetryAfterFailsTheRunWithExactlyItsEarlyRetries() async throws {
            let run = try EndToEndRun(profile: try Self.profileText())
            let clock = SteppingClock()
            var soak = run.makeVirtualRun(on: clock)
            soak.retryPolicy = IgnoresRetryAfterPolicy()
            let result = await soak.execute(driving: clock)
            let summary = try summary(result)
            #expect(result.exitCode == 1)
            // Independently from the CSV: each 429 that was not its call's last attempt, and the
            // retry after it. The policy retries 50 ms later and N is at least one second, so a
            // retry is early unless virtual time moved on while its task waited for a core (the
            // stepping clock cannot tell a busy task from an idle one on a loaded machine): the
            // gaps as recorded decide, exactly as the verdict must judge them.
            let attempts = try run.attempts()
            var calls: [CallKey: [AttemptRecord]] = [:]
            for attempt in attempts where attempt.endpoint != .session {
                calls[CallKey(attempt), default: []].append(attempt)
            }
            var retried429s = 0
            var early = 0
            for var call in calls.values {
                call.sort { $0.attempt < $1.attempt }
                for (previous, next) in zip(call, call.dropFirst()) where previous.status == 429 {
                    retried429s += 1
                    let n = Double(try #require(previous.retryAfterSeconds))
                    if next.actualStart - previous.end < n - 0.001 { early += 1 }
                }
            }
            #expect(retried429s > 0)
            #expect(early * 10 >= retried429s * 9, "\(early) of \(retried429s) retries early")
            #expect(summary.metrics["backoff.429.checked"] == Double(retried429s))
            #expect(summary.metrics["backoff.early"] == Double(early))
            #expect(summary.metrics["backoff.429.early"] == Double(early))
            #expect(summary.metrics["retry.violations"] == 0)
            let threshold = try #require(summary.thresholds.first { $0.expression == "backoff.early == 0" })
            #expect(!threshold.passed)
        }
    }
}
