import Foundation
import OptoLinkSoak
import Testing

/// `capacity` end to end against the embedded emulator, with SLOs whose outcome does not depend
/// on the machine's speed, probes of 1 s.
@Suite("capacity command: probes against the embedded emulator", .serialized, .timeLimit(.minutes(2)))
struct CapacityCommandTests {
    static let profile = """
        {"name": "capacity-e2e", "seed": 5, "devices": {"count": 50},
         "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}, {"kind": "event", "name": "app_open"}]}],
         "load": {"model": "open", "startRate": 10, "stages": [{"duration": 1, "target": 10}], "grace": 2},
         "sdk": {"timeout": 3}}
        """

    /// Runs `capacity` with `slo` from 10/s up to `maxRate`, returning the exit code and the report.
    static func run(slo: [String], maxRate: Double, warmup: Double) async throws -> (Int32, CapacityReport, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("capacity-e2e-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let profile = directory.appendingPathComponent("profile.json")
        try Data(Self.profile.utf8).write(to: profile)
        var options = CapacityCommand.Options()
        options.profilePath = profile.path
        options.slo = slo
        // These runs check the command's plumbing (exit codes, files) on a busy CI machine, where one
        // late start in a 10-journey probe is 10 %: the generator's limits are judged by the pure
        // tests of CapacityGeneratorHealth and CapacityProbe, so here they are out of reach.
        options.generatorLimits.lateShare = 1
        options.generatorLimits.droppedShare = 1
        options.generatorLimits.startLagP99 = 3600
        options.generatorLimits.cpuShare = 10
        options.minRate = 10
        options.maxRate = maxRate
        options.probeSeconds = 1
        options.warmup = warmup
        options.outDirectory = directory.appendingPathComponent("report").path
        let result = await CapacityCommand.run(options) { _ in }
        let report = try JSONDecoder().decode(
            CapacityReport.self,
            from: Data(contentsOf: directory.appendingPathComponent("report/capacity.json")))
        return (result.exitCode, report, directory)
    }

    @Test("an SLO broken at the minimum rate: exit 1, one probe, the term and its value in capacity.json")
    func failsAtMinimum() async throws {
        let (code, report, directory) = try await Self.run(slo: ["http.requests < 1"], maxRate: 40, warmup: 0)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(code == 1)
        #expect(report.ending == "failedAtMinimum")
        #expect(report.knee == nil)
        #expect(report.probes.count == 1)
        let probe = try #require(report.probes.first)
        #expect(probe.result == "fail" && probe.failed == "http.requests < 1")
        #expect((probe.slo.first?.observed ?? 0) > 0)
        #expect(probe.generator.started > 0)
    }

    @Test("an SLO held at the highest rate: exit 0, the rate is the answer, the warm-up's report is gone")
    func sustainsMaximum() async throws {
        let (code, report, directory) = try await Self.run(slo: ["http.failed.rate < 0.5"], maxRate: 10, warmup: 0.5)
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(code == 0)
        #expect(report.ending == "sustainedMax")
        #expect(report.knee?.journeysPerSecond == 10)
        #expect((report.knee?.requestsPerSecond ?? 0) > 0)
        let probe = try #require(report.probes.first)
        #expect(FileManager.default.fileExists(atPath: probe.report + "/summary.json"))
        let probes = directory.appendingPathComponent("report/probes")
        let names = try FileManager.default.contentsOfDirectory(atPath: probes.path)
        #expect(!names.contains { $0.hasSuffix("-warmup") })
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("report/capacity.txt").path))
    }
}
