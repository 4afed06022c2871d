import Foundation
import OptoLink
import Testing

import OptoLinkSoak
import SoakRecords
import SoakVerdicts
import SoakReports

/// The `opens` breakdown around a `/data` outage: phases, the SDK's worst case, the per-device
/// route cache switch, the metrics the outage profile gates on, and one real run.
@Suite(.timeLimit(.minutes(2)))
struct OutageOpensTests {
    static let plan = OutagePlan(
        windows: [OutagePlan.Window(startSeconds: 20, endSeconds: 40, mode: "refuse")], worstCaseSeconds: 7.5)

    /// CONTRACT §2 retry matrix: 3 attempts of the timeout plus 0.5 s and 1 s of back-off; the
    /// table caps a wait at 5 s.
    static let worstCases: [(Double, Int, Double)] = [
        (10.0, 2, 31.5), (2.0, 2, 7.5), (5.0, 0, 5.0), (1.0, 5, 18.5), (1.0, 6, 24.5),
    ]

    @Test(arguments: worstCases)
    func worstCaseFollowsTheBackoffTable(timeout: Double, maxRetries: Int, expected: Double) {
        #expect(OutagePlan.worstCase(timeout: timeout, maxRetries: maxRetries) == expected)
    }

    @Test(arguments: [
        (0.0, OpenPhase.before), (12.4, .before), (12.5, .edge), (19.99, .edge), (20.0, .during),
        (32.5, .during), (32.51, .edge), (39.99, .edge), (40.0, .after), (55.0, .after),
    ])
    func anOpenIsDuringOnlyWhenItsWholeWorstCaseFallsInTheWindow(start: Double, phase: OpenPhase) {
        #expect(Self.plan.phase(of: start) == phase)
    }

    /// Another input of the kind: two windows; the gap between them is neither before nor after.
    @Test func theGapBetweenTwoWindowsIsAnEdge() {
        let plan = OutagePlan(
            windows: [
                .init(startSeconds: 50, endSeconds: 60, mode: "reset"),
                .init(startSeconds: 10, endSeconds: 20, mode: "refuse"),
            ], worstCaseSeconds: 2)
        #expect(plan.phase(of: 15) == .during)
        #expect(plan.phase(of: 30) == .edge)
        #expect(plan.phase(of: 55) == .during)
        #expect(plan.phase(of: 61) == .after)
    }

    @Test(arguments: [(0.5, 100, 50), (0.5, 7, 4), (0.0, 10, 0), (1.0, 9, 9), (0.25, 10, 3), (1.0 / 3, 12, 4)])
    func theRouteCacheShareIsExactAndSpread(share: Double, count: Int, on: Int) {
        let population = DevicePopulation(count: count, routeCache: share)
        let flags = (0..<count).map { population.routeCacheOn(index: $0) }
        #expect(flags.filter { $0 }.count == on)
        if share == 0.5 {
            #expect(!flags.indices.dropFirst().contains { flags[$0] && flags[$0 - 1] }, "no two in a row")
        }
        let devices = VirtualDevice.population(population, seed: 1)
        #expect(devices.map(\.routeCache) == flags)
    }

    @Test func aRouteCacheShareOutsideZeroToOneNamesTheField() throws {
        let json = e2eProfile(devices: 3, rate: 3, steps: #"{"kind": "firstLaunch"}"#)
            .replacingOccurrences(of: #""clipboardSurvives": 1,"#, with: #""clipboardSurvives": 1, "routeCache": 1.5,"#)
        #expect {
            try SoakProfile.decode(Data(json.utf8))
        } throws: { error in
            "\(error)".contains("devices.routeCache: must be 0…1")
        }
    }

    @Test func theProfileDeclaresTheDataOutageAndTheWorstCase() throws {
        let url = ShippedProfiles.url("outage.json")
        let profile = try SoakProfile.load(contentsOf: url)
        let plan = try #require(OutagePlan.of(profile))
        #expect(plan.windows == [.init(startSeconds: 20, endSeconds: 40, mode: "refuse")])
        #expect(plan.worstCaseSeconds == 7.5)
        #expect(profile.devices.routeCache == 0.5)
        for spec in profile.expect.thresholds {
            #expect(Thresholds.problem(in: spec.expression) == nil, "\(spec.expression)")
        }
    }

    /// Every phase, cache group and outcome reaches the summary and the metrics; rates over no
    /// opens are left out so a threshold on them cannot pass on nothing.
    @Test func theRecorderCountsEveryOpenByPhaseGroupAndOutcome() throws {
        let opens = try Self.recordedOpens()
        let outage = try #require(opens.outage)
        #expect(opens.count == 11 && opens.lost == 2 && opens.timedOut == 1)
        #expect(outage.count(.during) == 6)
        #expect(outage.count(.during, group: "cache_on", .cached) == 2)
        #expect(outage.count(.during, group: "cache_off", .raw) == 2)
        #expect(outage.overWorstCase == 1, "the open that timed out after 10 s")
        #expect(outage.timeToLink.count == 5)
        let m = SummaryMetrics.openMetrics(opens)
        #expect(m["opens.outage.count"] == 6)
        #expect(m["opens.outage.lost"] == 1)
        #expect(m["opens.outage.fallback_rate"] == 5.0 / 6)
        #expect(m["opens.outage.cache_on.cached_share"] == 2.0 / 3)
        #expect(m["opens.outage.cache_off.raw_share"] == 2.0 / 3)
        #expect(m["opens.outage.before.resolved"] == 1 && m["opens.outage.after.resolved"] == 1)
        #expect(m["opens.outage.edge.count"] == 1)
        #expect(m["opens.cancelled_by_run"] == 1 && m["opens.raw"] == 4)
        #expect(m["opens.outage.worst_case"] == 7.5)
        #expect(m["opens.outage.time_to_link.max"] == 2.0)
        let unknown = m.keys.filter { !Thresholds.isKnownMetric($0) }
        #expect(unknown.isEmpty, "\(unknown)")

        var empty = opens
        empty.outage = SoakSummary.OutageOpenSummary(
            plan: Self.plan, opens: [:], timeToLink: LatencyHistogram(), timeToLinkByCache: [:], overWorstCase: 0)
        let none = SummaryMetrics.openMetrics(empty)
        #expect(none["opens.outage.count"] == 0)
        #expect(none["opens.outage.fallback_rate"] == nil && none["opens.outage.cache_on.cached_share"] == nil)
        #expect(Thresholds.evaluate("opens.outage.fallback_rate == 1", metrics: none).passed == false)
    }

    /// Opens at every phase, group and outcome, recorded against ``plan``.
    static func recordedOpens() throws -> SoakSummary.OpenSummary {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("opens-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = try SoakRecorder(directory: directory, timeline: RunTimeline(), outage: plan)
        let records: [OpenRecord] = [
            .init(start: 1, latency: 0.01, outcome: .resolved, universal: true, routeCache: true),
            .init(start: 21, latency: 1.5, outcome: .cached, universal: true, routeCache: true),
            .init(start: 22, latency: 1.6, outcome: .cached, universal: true, routeCache: true),
            .init(start: 23, latency: 2.0, outcome: .raw, universal: true, routeCache: true),
            .init(start: 21, latency: 1.5, outcome: .raw, universal: true, routeCache: false),
            .init(start: 22, latency: 1.5, outcome: .raw, universal: true, routeCache: false),
            .init(start: 24, latency: 10, outcome: .timedOut, universal: true, routeCache: false),
            .init(start: 38, latency: 0.01, outcome: .resolved, universal: true, routeCache: false),
            .init(start: 45, latency: 0.01, outcome: .resolved, universal: true, routeCache: true),
            .init(start: 25, latency: 0.001, outcome: .raw, universal: false, routeCache: true),
            .init(start: 50, latency: 3, outcome: .cancelledByRun, universal: false, routeCache: true),
        ]
        for record in records { recorder.openRecorded(record) }
        recorder.finish()
        return recorder.summaryParts(activeSeconds: 60).opens
    }

    @Test func theSummaryTextShowsTheBreakdownAndTheHistogram() throws {
        let lines = SummaryText.openLines(try Self.recordedOpens())
        #expect(lines.first == "opens: 3 resolved, 2 cached, 4 raw, 1 timed out, 1 cut by the run's end (lost 2)")
        #expect(lines.contains { $0.hasPrefix("outage of /data (refuse s20–40), SDK worst case 7.5 s") })
        #expect(
            lines.contains(
                "  during: cache on 3: 2 cached (66.7%), 1 raw (33.3%) · cache off 3: 2 raw (66.7%), 1 timed_out (33.3%)"
            ))
        // Bins by each histogram bucket's lower bound (within its stated precision, below the value).
        #expect(lines.contains("  histogram: 1–1.5 s 3 · 1.5–2 s 2"))
    }

    /// The whole path against the embedded emulator: a short `/data` outage, half the devices
    /// with the cache. Timing-tolerant: only opens whose whole worst case lies inside the window
    /// are judged, and the window leaves seconds of margin around them.
    @Test func aRealRunThroughAShortOutage() async throws {
        let steps = """
            {"kind": "firstLaunch"}, {"kind": "open", "link": "promo", "timeout": 8},
            {"kind": "wait", "seconds": 6}, {"kind": "relaunch"}, {"kind": "open", "link": "promo", "timeout": 8},
            {"kind": "wait", "seconds": 6}, {"kind": "open", "link": "promo", "timeout": 8}
            """
        let load =
            #"{"model": "open", "startRate": 8, "stages": [{"duration": 0.5, "target": 8}], "iterations": 4, "duration": 16, "grace": 5}"#
        var profile = e2eProfile(devices: 4, rate: 8, steps: steps, load: load)
        profile = profile.replacingOccurrences(of: #""sdk": {"timeout": 3}"#, with: #""sdk": {"timeout": 1}"#)
        profile = profile.replacingOccurrences(
            of: #""clipboardSurvives": 1,"#, with: #""clipboardSurvives": 1, "routeCache": 0.5,"#)
        profile = profile.replacingOccurrences(
            of: #""backend": {"limits""#,
            with:
                #""backend": {"faults": {"outages": [{"mode": "refuse", "endpoints": ["data"], "startSeconds": 5.5, "endSeconds": 13}]}, "limits""#
        )
        let run = try EndToEndRun(profile: profile)
        // In virtual time: the waits, back-offs and the emulator's outage window share one clock.
        let clock = SteppingClock()
        let result = await run.makeVirtualRun(on: clock).execute(driving: clock)
        let summary = try #require(result.summary, "\(result.error ?? "")")
        let outage = try #require(summary.opens.outage)
        #expect(outage.worstCaseSeconds == 4.5)
        #expect(outage.count(.during) >= 2, "\(outage.phases)")
        #expect(outage.count(.during, group: "cache_on") == outage.count(.during, group: "cache_on", .cached))
        #expect(outage.count(.during, group: "cache_off") == outage.count(.during, group: "cache_off", .raw))
        #expect(outage.count(.after) + outage.count(.edge) + outage.count(.before) >= 4, "\(outage.phases)")
        #expect(outage.count(.before) == outage.count(.before, .resolved))
        #expect(outage.count(.after) == outage.count(.after, .resolved))
        #expect(summary.opens.lost == 0)
        #expect(outage.overWorstCase == 0)
        #expect(summary.metrics["opens.outage.fallback_rate"] == 1)
    }
}
