import Foundation
import OptoLinkTestSupport
import SoakReports
import SoakVerdicts
import Testing

@testable import OptoLinkSoak

/// When the load generator, not the backend, is the limit: late starts against the profile's
/// `expect.lateStartLimit`, in the summary's first lines, the `journeys.late_starts.rate` metric,
/// and the progress line's late starts per second and CPU. Times come from a virtual clock.
@Suite("generator limit: a run says when its own arrival schedule fell behind")
struct GeneratorLimitTests {
    /// A summary of 200 journeys started 10 ms apart on a virtual clock (2 s), of which `late`
    /// started 50 ms after their plan, all of them in the first second; the rest 1 ms late.
    static func summary(late: Int, limit: Double?) throws -> SoakSummary {
        let clock = ManualClock()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("generator-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = try SoakRecorder(directory: directory, timeline: RunTimeline(clock: clock), interval: 1)
        for i in 0..<200 {
            recorder.journeyStarted(name: "j", lag: i < late ? 0.050 : 0.001)
            clock.advance(by: .milliseconds(10))
        }
        recorder.finish()
        let run = SoakSummary.RunMetadata(
            runId: "vt", profile: "vt", soakVersion: "t", startedAt: "", startEpoch: 0, durationSeconds: 2,
            interrupted: false, stopReason: .completed, backend: "remote", baseURL: "", loadModel: "open",
            devices: 1, seed: 1)
        var summary = MeasuredSummary.build(
            run: run, tally: recorder.tally(), outage: nil, loadModel: .open, scheduled: 200, rss: [],
            counters: nil, ledgerEntries: nil)
        summary.journeys.lateStartLimit = limit
        summary.run.generator = SoakSummary.GeneratorUse(
            cpuSeconds: 3, wallSeconds: 2, cores: 2, withEmbeddedBackend: false)
        return summary
    }

    @Test("over the default 1 %: the first summary lines name the generator, with late starts per second and CPU")
    func overTheLimit() throws {
        let summary = try Self.summary(late: 6, limit: nil)
        let lines = SummaryText.render(summary).split(separator: "\n").map(String.init)
        let index = try #require(lines.firstIndex { $0.hasPrefix("generator:") })
        #expect(index < 3, "the generator line leads the summary: \(lines)")
        let line = lines[index]
        #expect(line.contains("THE LIMIT"))
        #expect(line.contains("6 of 200 journeys started over 10ms late (3.0 %, limit 1.0 %)"), "\(line)")
        #expect(line.contains("at most 6 late starts in a second"), "\(line)")
        #expect(line.contains("CPU 1.50 of 2 cores (75 %)"), "\(line)")
        #expect(lines.filter { $0.hasPrefix("generator:") }.count == 1)
    }

    @Test("within the profile's limit: the line says the plan was kept and stays with the journeys")
    func withinTheLimit() throws {
        let summary = try Self.summary(late: 6, limit: 0.05)
        #expect(!GeneratorLine.isLimit(summary))
        let lines = SummaryText.render(summary).split(separator: "\n").map(String.init)
        let index = try #require(lines.firstIndex { $0.hasPrefix("generator:") })
        #expect(lines[index].hasPrefix("generator: kept to its plan"), "\(lines[index])")
        #expect(lines[index].contains("limit 5.0 %"))
        let journeys = try #require(lines.firstIndex { $0.hasPrefix("journeys:") })
        #expect(index > journeys)
        // Exactly at the limit is not over it.
        #expect(!GeneratorLine.isLimit(try Self.summary(late: 2, limit: 0.01)))
        #expect(GeneratorLine.isLimit(try Self.summary(late: 3, limit: 0.01)))
    }

    @Test("journeys.late_starts.rate is late starts per started journey, and a threshold can judge it")
    func metric() throws {
        let summary = try Self.summary(late: 6, limit: nil)
        let metrics = SummaryMetrics.build(summary)
        #expect(metrics["journeys.late_starts.rate"] == 0.03)
        let results = Thresholds.evaluate(
            ["journeys.late_starts.rate < 0.01", "journeys.late_starts.rate < 5%"], metrics: metrics)
        #expect(results.map(\.passed) == [false, true])
    }

    @Test("expect.lateStartLimit: decoded, checked, and left out of the profile's fingerprint")
    func profileField() throws {
        func profile(_ expect: String) throws -> SoakProfile {
            try SoakProfile.decode(
                Data(
                    #"""
                    {"name": "g", "devices": {"count": 1}, "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}]}],
                     "load": {"model": "open", "startRate": 1, "stages": [{"duration": 1, "target": 1}]},
                     "expect": \#(expect)}
                    """#.utf8))
        }
        #expect(try profile("{}").expect.effectiveLateStartLimit == 0.01)
        let set = try profile(#"{"lateStartLimit": 0.05}"#)
        #expect(set.expect.effectiveLateStartLimit == 0.05)
        #expect(ProfileFingerprint.of(set) == ProfileFingerprint.of(try profile("{}")))
        #expect(throws: (any Error).self) { try profile(#"{"lateStartLimit": 5}"#) }
        do {
            _ = try profile(#"{"lateStartLimit": 5}"#)
        } catch {
            #expect("\(error)".contains("lateStartLimit"), "\(error)")
        }
    }

    @Test("progress: late starts counted against the run's threshold; the line shows late/s and CPU")
    func progress() {
        var tally = ProgressTally(lateThreshold: 0.01)
        tally.consume(.journeyStarted(name: "j", at: 1, lag: 0.011))
        tally.consume(.journeyStarted(name: "j", at: 1, lag: 0.010))
        tally.consume(.journeyStarted(name: "j", at: 1, lag: 0.5))
        #expect(tally.lateStarts == 2)
        var snapshot = ProgressSnapshot(
            elapsed: 1, scheduled: 3, done: 0, inFlight: 3, requests: 0, requestRate: 0, status429: 0, errors: 0,
            p99: 0)
        #expect(!snapshot.line.contains("late"))
        snapshot.lateStartsPerSecond = 12.4
        snapshot.cpuShare = 0.853
        #expect(snapshot.line.hasSuffix(" · p99 0.0ms · late 12/s · cpu 85%"), "\(snapshot.line)")
    }
}
