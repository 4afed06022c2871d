import Foundation
import Testing

import OptoLinkSoak

@Suite("dropped arrivals: the open model's planned journeys that never started", .serialized, .timeLimit(.minutes(1)))
struct DroppedArrivalsTests {
    static let steps = #"{"kind": "firstLaunch"}"#
    /// 20 arrivals in 1 s, at most 2 journeys in flight, and a backend that answers `/match` in
    /// 0.4 s: at most 2 journeys start per 0.4 s, so most arrivals wait for a slot until the step
    /// window closes and never start.
    static func profile(thresholds: String = "[]") -> String {
        let load = #"""
            {"model": "open", "startRate": 20, "stages": [{"duration": 1, "target": 20}], "maxInFlight": 2,
             "duration": 1, "grace": 5}
            """#
        return e2eProfile(devices: 20, rate: 20, steps: steps, thresholds: thresholds, load: load)
            .replacingOccurrences(
                of: #""events": {"limit": 100000, "windowSeconds": 60}}"#,
                with: #""events": {"limit": 100000, "windowSeconds": 60}}, "#
                    + #""faults": {"endpoints": {"match": [{"kind": "latency", "rate": 1, "delaySeconds": 0.4}]}}"#)
    }

    @Test("a slow backend with a small maxInFlight: drops are counted everywhere and fail the run")
    func dropsCountedAndFailing() async throws {
        let e2e = try EndToEndRun(profile: Self.profile())
        let result = await e2e.makeRun().execute()
        let summary = try #require(result.summary)
        let dropped = try #require(summary.journeys.dropped)
        #expect(dropped > 0)
        #expect(summary.journeys.started + dropped == 20, "every planned arrival either started or was dropped")
        #expect(summary.journeys.scheduled == 20)
        #expect(summary.timeline.reduce(0) { $0 + ($1.dropped ?? 0) } == dropped)
        #expect(summary.metrics["journeys.dropped"] == Double(dropped))
        let threshold = try #require(summary.thresholds.first { $0.expression == "journeys.dropped == 0" })
        #expect(!threshold.passed)
        #expect(result.exitCode == 1)
        let text = try String(contentsOf: e2e.reportDirectory.appendingPathComponent("summary.txt"), encoding: .utf8)
        #expect(text.contains("journeys dropped: \(dropped) of 20 planned never started"), "\(text)")
        let html = try String(contentsOf: e2e.reportDirectory.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("journeys dropped (never started)"))
    }

    @Test("a profile that names journeys.dropped relaxes the default threshold")
    func relaxed() async throws {
        let e2e = try EndToEndRun(profile: Self.profile(thresholds: #"["journeys.dropped <= 20"]"#))
        let result = await e2e.makeRun().execute()
        let summary = try #require(result.summary)
        #expect((summary.journeys.dropped ?? 0) > 0)
        #expect(!summary.thresholds.contains { $0.expression == "journeys.dropped == 0" })
        let failed = summary.thresholds.filter { !$0.passed }.map(\.expression)
        #expect(failed.isEmpty, "\(failed)")
        #expect(result.exitCode == 0)
    }
}
