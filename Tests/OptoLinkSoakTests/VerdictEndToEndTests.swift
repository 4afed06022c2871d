import Foundation
import OptoLink
import OptoLinkStaging
import Testing

@testable import OptoLinkSoak

extension WholeRuns {
    /// The verdicts through the whole tool: `optolink-soak run Profiles/verdicts/rate-limits-short.json`
    /// (the real driver on its default native transport, the emulator over sockets), judged from the report.
    /// In virtual time: the run, the SDK instances and the emulator's limiter share one ``SteppingClock``,
    /// so every `Retry-After` wait and every 2 s window is exact and takes no real time.
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct VerdictEndToEndTests {
        static func profileText(lenientBy factor: Double = 1) throws -> String {
            let url = URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Profiles/verdicts/rate-limits-short.json")
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
            // Independently from the CSV: every 429 that was not its call's last attempt was
            // followed by a retry 50 ms later, and N is at least one second.
            let attempts = try run.attempts()
            var lastAttempt: [String: Int] = [:]
            for attempt in attempts {
                let key = "\(attempt.device)#\(attempt.launch)#\(attempt.callId)"
                lastAttempt[key] = max(lastAttempt[key] ?? 0, attempt.attempt)
            }
            let retried429s = attempts.filter {
                $0.status == 429 && $0.endpoint != .session
                    && $0.attempt < lastAttempt["\($0.device)#\($0.launch)#\($0.callId)", default: 0]
            }.count
            #expect(retried429s > 0)
            #expect(summary.metrics["backoff.early"] == Double(retried429s))
            #expect(summary.metrics["backoff.429.early"] == Double(retried429s))
            #expect(summary.metrics["retry.violations"] == 0)
            let threshold = try #require(summary.thresholds.first { $0.expression == "backoff.early == 0" })
            #expect(!threshold.passed)
        }
    }
}
