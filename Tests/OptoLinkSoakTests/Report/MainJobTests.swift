import Foundation
import Testing

import OptoLinkSoak
import SoakVerdicts
import SoakReports

extension WholeRuns {
    /// The README's first command, `optolink-soak run Profiles/limits.json`: it must answer the
    /// question the tool exists for in its first lines (issue 9, point 5).
    @Suite(.serialized, .timeLimit(.minutes(2)))
    struct MainJobTests {
        @Test(
            "the main job drives /match per IP and events per key past their limits; its report says they were enforced and obeyed"
        )
        func mainJobAnswersItsQuestion() async throws {
            let url = ShippedProfiles.url("limits.json")
            // The headline lines are checked at fixed places: a virtual-time run on a busy machine can
            // start a few journeys late, and the generator line would then lead the summary.
            let profile = try String(contentsOf: url, encoding: .utf8)
                .replacingOccurrences(of: #""expect": {"#, with: #""expect": {"lateStartLimit": 1, "#)
            let run = try EndToEndRun(profile: profile)
            // In virtual time: the Retry-After waits and the emulator's windows take no real time.
            let clock = SteppingClock()
            let result = await run.makeVirtualRun(on: clock).execute(driving: clock)
            let summary = try #require(result.summary, "\(result.error ?? "")")
            #expect(result.exitCode == 0, "\(summary.thresholds.filter { !$0.passed }.map(\.line))")
            let verdicts = try #require(summary.verdicts)
            for name in ["match", "events"] {
                let bucket = try #require(verdicts.limits.buckets[name])
                #expect(bucket.rejected > 0 && bucket.windows >= 3, "\(name) not driven past its limit: \(bucket)")
                #expect(bucket.enforcedExactly, "\(name)")
            }
            #expect(verdicts.backoff.rateLimited.checked > 20)
            #expect(summary.run.durationSeconds < 40)
            let lines = SummaryText.render(summary).split(separator: "\n").map(String.init)
            #expect(lines.count > 4)
            #expect(lines[0] == "result: passed (exit 0), every threshold passed (\(summary.thresholds.count) judged)")
            #expect(lines[3].hasPrefix("limits enforced by the server: YES, enforced exactly"), "\(lines[3])")
            #expect(lines[4].hasPrefix("clients waited as told: YES"), "\(lines[4])")
            // Every threshold judged something: none passes by default.
            #expect(summary.thresholds.allSatisfy { $0.notExercised == nil })
        }

        @Test("the headline says NO when a limit was enforced wrongly or a client came early")
        func headlineSaysNo() throws {
            // An empty fixed-window verdict (no limits declared).
            var limits = LimitOracleVerdict.evaluate([], configuration: VerdictsConfiguration())
            var bucket = LimitOracleVerdict.Bucket(
                declared: DeclaredLimit(limit: 10, windowSeconds: 2, scope: .ip), endpoints: [.match])
            bucket.rejected = 5
            bucket.tooLenient = 2
            limits.buckets["match"] = bucket
            var backoff = BackoffVerdict.evaluate([], configuration: VerdictsConfiguration())
            backoff.rateLimited.checked = 4
            backoff.rateLimited.early = 1
            let report = VerdictsReport(
                results: [
                    backoff, limits,
                    RetryMatrixVerdict.evaluate(attempts: [], calls: [], maxRetries: 2, configuration: .init()),
                ])
            var summary = try Self.emptySummary()
            summary.verdicts = report
            let headline = SummaryText.headline(summary)
            #expect(headline[0].contains("NO, the server did not enforce the declared limits exactly"))
            #expect(headline[0].contains("2 too lenient"))
            #expect(headline[1].contains("NO, 1 of 4 retries after a 429 came early"))
        }

        static func emptySummary() throws -> SoakSummary {
            let json = #"""
                {"schemaVersion":1,"run":{"runId":"r","profile":"p","soakVersion":"0","startedAt":"","startEpoch":0,
                "durationSeconds":1,"interrupted":false,"stopReason":"completed","backend":"embedded","baseURL":"",
                "loadModel":"open","devices":1,"seed":1},
                "journeys":{"scheduled":0,"started":0,"completed":0,"unfinished":0,"lateStarts":0,"lateThresholdSeconds":0.01,
                "startLag":{"count":0,"min":0,"mean":0,"p50":0,"p90":0,"p95":0,"p99":0,"p999":0,"max":0,"buckets":[]},"byName":{}},
                "endpoints":{},"totals":{"attempts":0,"calls":0,"status429":1,"errors":0,"attemptsPerSecond":0},
                "deferredMatch":{"firstLaunches":0,"byMethod":{},"clicked":0},
                "clicks":{"count":0,"byStatus":{},"clipboardPlaced":0,"latency":{"count":0,"min":0,"mean":0,"p50":0,"p90":0,"p95":0,"p99":0,"p999":0,"max":0,"buckets":[]}},
                "opens":{"count":0,"emitted":0,"timedOut":0,"latency":{"count":0,"min":0,"mean":0,"p50":0,"p90":0,"p95":0,"p99":0,"p999":0,"max":0,"buckets":[]}},
                "rss":[],"timeline":[],"intervalSeconds":1,"metrics":{},"thresholds":[],"notes":[],"histogramPrecision":0.01}
                """#
            return try JSONDecoder().decode(SoakSummary.self, from: Data(json.utf8))
        }
    }
}
