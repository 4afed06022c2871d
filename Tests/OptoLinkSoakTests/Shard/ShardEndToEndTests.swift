import Foundation
import OptoLinkStaging
import Testing

import OptoLinkSoak
import SoakRecords

/// The same plan run whole and as three shards against one emulator, then merged: the merge
/// reports what the whole run reported (counts, verdict counts), and its percentiles are those
/// of the union of the shards' samples within the histogram's precision.
@Suite("sharded run end to end", .serialized)
struct ShardEndToEndTests {
    /// 18 devices (a multiple of 3), 18 journeys in 1 s, limits far away (no 429) and a 30 s
    /// per-attempt timeout (no timeout on a loaded machine), so every count is deterministic.
    static let profile = e2eProfile(
        devices: 18, rate: 18,
        steps: #"{"kind": "firstLaunch"}, {"kind": "event", "name": "app_open", "repeat": 2}, "#
            + #"{"kind": "identify", "externalId": "user-{device}"}, {"kind": "clearIdentity"}"#
    ).replacingOccurrences(of: #""sdk": {"timeout": 3}"#, with: #""sdk": {"timeout": 30}"#)

    @Test("three shards merged report the whole run's counts and verdict counts")
    func threeShardsMergedEqualTheWhole() async throws {
        #expect(Self.profile.contains(#""timeout": 30"#))
        let whole = try EndToEndRun(profile: Self.profile)
        let wholeResult = await whole.makeRun().execute()
        #expect(wholeResult.exitCode == 0, "\(whole.log)")
        let expected = try #require(wholeResult.summary)

        let sharded = try EndToEndRun(profile: Self.profile)
        let decoded = try SoakProfile.load(contentsOf: sharded.profileURL)
        let backend = try await EmbeddedBackend.start(decoded)
        let (results, directories) = await sharded.runShards(3, against: backend.baseURL, runId: "e2eshards")
        let codes = results.map(\.exitCode)
        #expect(codes == [0, 0, 0], "shard exit codes \(codes)")
        var merge = MergeOptions(directories: directories)
        merge.outDirectory = sharded.directory.appendingPathComponent("merged").path
        let extras = MergeCommand.Extras(
            ledger: backend.server.ledger().map(LedgerRow.init), counters: await backend.counters())
        let merged = MergeCommand.run(merge, extras: extras) { _ in }
        await backend.stop()
        #expect(merged.exitCode == 0, "\(merged.summary?.thresholds.filter { !$0.passed } ?? [])")
        let summary = try #require(merged.summary)

        // Counts per endpoint, status and outcome.
        #expect(summary.totals.attempts == expected.totals.attempts)
        #expect(summary.totals.calls == expected.totals.calls)
        #expect(Set(summary.endpoints.keys) == Set(expected.endpoints.keys))
        for (name, endpoint) in expected.endpoints {
            let got = try #require(summary.endpoints[name])
            #expect(got.attempts == endpoint.attempts, "\(name)")
            #expect(got.calls == endpoint.calls, "\(name)")
            #expect(got.byStatus == endpoint.byStatus, "\(name)")
            #expect(got.callOutcomes == endpoint.callOutcomes, "\(name)")
            #expect(got.attemptsPerCall == endpoint.attemptsPerCall, "\(name)")
            #expect(got.attemptLatency.count == endpoint.attemptLatency.count, "\(name)")
        }
        #expect(summary.journeys.started == expected.journeys.started)
        #expect(summary.journeys.completed == expected.journeys.completed)
        #expect(summary.journeys.byName == expected.journeys.byName)
        #expect(summary.journeys.scheduled == expected.journeys.scheduled)
        #expect(summary.deferredMatch.firstLaunches == expected.deferredMatch.firstLaunches)

        // Verdict counts: 429s judged, early/on time/late, retry-matrix calls, reconciliation outcomes.
        let got = try #require(summary.verdicts)
        let want = try #require(expected.verdicts)
        #expect(got.backoff.rateLimited == want.backoff.rateLimited)
        #expect(got.backoff.exponential == want.backoff.exponential)
        #expect(got.retries.calls == want.retries.calls && got.retries.violations == want.retries.violations)
        #expect(got.retries.attemptsPerCall == want.retries.attemptsPerCall)
        #expect(got.reconciliation.available && want.reconciliation.available)
        #expect(got.reconciliation.endpoints == want.reconciliation.endpoints)
        #expect(got.attribution.overall == want.attribution.overall)
        #expect(summary.run.shards?.merged == [0, 1, 2] && summary.run.shards?.streamed == true)

        // Percentiles of the merged histograms against the exact order statistics of the union.
        var samples: [String: [Double]] = [:]
        for directory in directories {
            let url = URL(fileURLWithPath: directory).appendingPathComponent("attempts.csv")
            for attempt in try ReportCSVReader.attempts(url) where attempt.status != nil {
                samples[attempt.endpoint.rawValue, default: []].append(attempt.end - attempt.actualStart)
            }
        }
        for (name, values) in samples {
            let sorted = values.sorted()
            let histogram = try #require(summary.endpoints[name]?.attemptLatency)
            #expect(histogram.count == UInt64(sorted.count))
            for (p, value) in [(50.0, histogram.p50), (90, histogram.p90), (99, histogram.p99)] {
                let exact = sorted[Int(NearestRank.rank(percentile: p, count: UInt64(sorted.count))) - 1]
                // The bucket's width bounds the error; plus the CSV's own time resolution.
                #expect(abs(value - exact) <= LatencyHistogram.relativePrecision * exact + 2e-9, "\(name) p\(p)")
            }
        }
    }

    @Test("a shard that starts after --start-at says so, and its missed arrivals count as late starts")
    func lateShardCountsLateStarts() async throws {
        let run = try EndToEndRun(profile: Self.profile)
        let backend = try await EmbeddedBackend.start(SoakProfile.load(contentsOf: run.profileURL))
        let startAt = Date().timeIntervalSince1970 - 0.5
        let soak = run.makeRun { options in
            options.baseURL = backend.baseURL
            options.shard = SoakShard(index: 0, count: 1)
            options.startAt = startAt
        }
        let result = await soak.execute()
        await backend.stop()
        let summary = try #require(result.summary)
        let late = try #require(summary.run.shards?.lateSeconds)
        #expect(late >= 0.5)
        #expect(summary.run.startEpoch == startAt)
        // Arrivals are 1/18 s apart from 1/36 s: at least the 9 planned in the first 0.5 s started late.
        #expect(summary.journeys.lateStarts >= 9)
        #expect(run.log.contains { $0.contains("after --start-at") && $0.contains("count as late starts") })
        let manifest = try ShardManifest.load(run.reportDirectory)
        #expect(manifest.lateSeconds == late && manifest.shard == SoakShard(index: 0, count: 1))
        #expect(manifest.planHash == summary.run.profileHash)
    }
}
