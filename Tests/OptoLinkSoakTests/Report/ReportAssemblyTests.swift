import Foundation
import Testing

import OptoLinkSoak
import SoakReports

/// The one report assembly `run`, `run --processes` and `merge` hand their summaries to.
@Suite("Report assembly")
struct ReportAssemblyTests {
    private func assembly(in directory: URL) throws -> (ReportAssembly, SoakSummary) {
        let profile = try SoakProfile.load(contentsOf: URL(fileURLWithPath: "Profiles/smoke.json"))
        let run = SoakSummary.RunMetadata(
            runId: "r", profile: profile.name, profilePath: nil, soakVersion: "t",
            startedAt: MeasuredSummary.timestamp(0), startEpoch: 0, durationSeconds: 3, interrupted: false,
            stopReason: .completed, backend: "embedded", baseURL: "http://127.0.0.1:1", loadModel: "open",
            devices: 1, seed: 1)
        let summary = MeasuredSummary.build(
            run: run, tally: RecorderTally(interval: 1, lateThreshold: 0.01), outage: nil, loadModel: .closed,
            scheduled: 0, rss: [], counters: nil, ledgerEntries: nil)
        var assembly = ReportAssembly(profile: profile, verdicts: VerdictsReport(results: []), log: { _ in })
        assembly.junitPath = directory.appendingPathComponent("junit.xml").path
        return (assembly, summary)
    }

    private func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("assembly-\(UUID().uuidString)")
    }

    @Test("the measured summary has a row per second of the run and no dropped count in the closed model")
    func measuredSummary() throws {
        let (_, summary) = try assembly(in: directory())
        #expect(summary.timeline.count == 3)
        #expect(summary.journeys.dropped == nil)
        #expect(summary.server == nil)
    }

    @Test("every registered file is written, shard.json only for a shard; abort rows follow 'started nothing'")
    func writesEveryFile() throws {
        let out = directory()
        defer { try? FileManager.default.removeItem(at: out) }
        var (assembly, summary) = try assembly(in: out)
        assembly.aborts = ["the run was aborted: x"]
        summary.run.runId = "files"
        let result = assembly.finish(summary, in: out)
        let written = Set(try FileManager.default.contentsOfDirectory(atPath: out.path))
        let expected = Set(ReportFiles.all.map(\.name)).subtracting([ShardManifest.fileName])
        #expect(expected.isSubset(of: written))
        #expect(!written.contains(ShardManifest.fileName))
        #expect(written.contains("junit.xml"))
        // Nothing started, so "journeys.started > 0" leads and the abort row comes second.
        #expect(result.summary?.thresholds.prefix(2).map(\.expression) == ["journeys.started > 0", "abortOnFail"])
        #expect(result.exitCode == 1 && result.summary?.result == .failed)
        let read = try SoakSummary.load(contentsOf: out.appendingPathComponent("summary.json"))
        #expect(read.run.runId == "files" && read.result == .failed)
    }

    @Test("I/O problems make the report invalid: exit 2, the reason first, no JUnit file")
    func ioProblemsInvalidate() throws {
        let out = directory()
        defer { try? FileManager.default.removeItem(at: out) }
        let (base, summary) = try assembly(in: out)
        var assembly = base
        assembly.fromShards = true
        assembly.notes = ["own"]
        assembly.recordNotes = ["records"]
        assembly.chartsLeftOut = true
        assembly.ioProblems = ["shard 0/2: attempts.csv: disk full"]
        let result = assembly.finish(summary, in: out)
        #expect(result.exitCode == 2 && result.summary?.result == .invalid)
        #expect(result.error?.hasPrefix("a shard's report is incomplete, so the merged verdicts") == true)
        let notes = result.summary?.notes ?? []
        #expect(notes.count == 4)
        #expect(notes.prefix(2) == ["own", "records"])
        #expect(notes[2].contains("the shards' attempts.csv files are over"))
        #expect(notes[3] == "report I/O failed: shard 0/2: attempts.csv: disk full")
        #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent("junit.xml").path))
    }
}
