import Foundation
import OptoLinkSoak
import OptoLinkStaging
import SoakRecords
import SoakVerdicts
import Testing

/// Two shards of one plan against one emulator (in process), then `merge`: each shard judges
/// only its own health and exits 0 although the profile's thresholds count the whole plan; the
/// merge judges those thresholds and writes a whole report — `attempts.csv`, `calls.csv` and
/// the ledger with the shards' rows.
@Suite("sharded reports", .serialized)
struct ShardedReportTests {
    /// 12 devices, 12 journeys in 1 s, one first launch each. `deferred.first_launches >= 10`
    /// holds for the whole plan (12) and fails on either half (6).
    static let profile = e2eProfile(
        devices: 12, rate: 12,
        steps: #"{"kind": "firstLaunch"}, {"kind": "event", "name": "app_open", "repeat": 2}"#,
        thresholds: #"["deferred.first_launches >= 10", "retry.violations == 0"]"#
    ).replacingOccurrences(of: #""sdk": {"timeout": 3}"#, with: #""sdk": {"timeout": 30}"#)

    /// Runs the two shards against one emulator; returns their results, directories and the ledger.
    static func runShards(_ run: EndToEndRun) async throws -> (
        results: [SoakRunResult], directories: [String], ledger: [LedgerRow]
    ) {
        let backend = try await EmbeddedBackend.start(SoakProfile.load(contentsOf: run.profileURL))
        let (results, directories) = await run.runShards(2, against: backend.baseURL, runId: "halves")
        let ledger = backend.server.ledger().map(LedgerRow.init)
        await backend.stop()
        return (results, directories, ledger)
    }

    static func dataRows(_ url: URL) throws -> Int {
        let text = try String(contentsOf: url, encoding: .utf8)
        return text.split(separator: "\n").count - 1
    }

    static func merge(
        _ directories: [String], into out: URL, ledger: [LedgerRow]? = nil, allowPartial: Bool = false
    ) -> SoakRunResult {
        var options = MergeOptions(directories: directories)
        options.outDirectory = out.path
        options.allowPartial = allowPartial
        options.force = true
        return MergeCommand.run(options, extras: MergeCommand.Extras(ledger: ledger)) { _ in }
    }

    @Test("each shard exits 0 on its health; the merge judges the whole and holds every row of the shards")
    func shardsPassAndTheMergeIsAWholeReport() async throws {
        let run = try EndToEndRun(profile: Self.profile)
        let (results, directories, ledger) = try await Self.runShards(run)
        for (index, result) in results.enumerated() {
            #expect(result.exitCode == 0, "shard \(index): \(result.summary?.thresholds.filter { !$0.passed } ?? [])")
            let summary = try #require(result.summary)
            // The shard judged its health, not the plan's thresholds, and says which slice it ran.
            #expect(summary.thresholds.map(\.expression).allSatisfy { $0.hasPrefix("shard.") })
            #expect(summary.run.devices == 6)
            let slice = try #require(summary.run.shards?.slice)
            #expect(slice.devices == 6 && slice.planDevices == 12 && slice.loadShare == 0.5)
            #expect(slice.journeys == summary.journeys.scheduled)
            let text = try String(
                contentsOf: URL(fileURLWithPath: directories[index]).appendingPathComponent("summary.txt"),
                encoding: .utf8)
            #expect(text.contains("shard \(index)/2: 6 of the plan's 12 devices"))
        }

        let out = run.directory.appendingPathComponent("merged")
        let merged = Self.merge(directories, into: out, ledger: ledger)
        #expect(merged.exitCode == 0, "\(merged.summary?.thresholds.filter { !$0.passed } ?? [])")
        let summary = try #require(merged.summary)
        let whole = try #require(summary.thresholds.first { $0.expression == "deferred.first_launches >= 10" })
        #expect(whole.passed && whole.observed == 12)

        for name in ["attempts.csv", "calls.csv"] {
            let shardRows = try directories.reduce(0) {
                $0 + (try Self.dataRows(URL(fileURLWithPath: $1).appendingPathComponent(name)))
            }
            #expect(shardRows > 0)
            #expect(try Self.dataRows(out.appendingPathComponent(name)) == shardRows, "\(name)")
            #expect(!FileManager.default.fileExists(atPath: out.appendingPathComponent(name + ".partial").path))
        }
        #expect(try Self.dataRows(out.appendingPathComponent("attempts.csv")) == summary.totals.attempts)
        // In time order (each attempt's end, moved onto the merge's clock), and the rows read back.
        let attempts = try ReportCSVReader.attempts(out.appendingPathComponent("attempts.csv"))
        #expect(attempts.map(\.end) == attempts.map(\.end).sorted())
        let ledgerLines = try String(contentsOf: out.appendingPathComponent("ledger.jsonl"), encoding: .utf8)
            .split(separator: "\n")
        #expect(!ledger.isEmpty && ledgerLines.count == ledger.count)
        #expect(
            try ledgerLines.map { try JSONDecoder().decode(LedgerRow.self, from: Data($0.utf8)) } == ledger)
        // `compare` reads the merged directory as any report: its summary, and per-request
        // latencies from the merged attempts.csv for the per-block test.
        _ = try SoakReportDirectory.load(out)
        let samples = try #require(LatencySamples.read(directory: out))
        #expect(samples.series.values.reduce(0) { $0 + $1.count } >= attempts.filter { $0.status != nil }.count)
    }

    @Test("a shard that failed its health check, or never finished, makes merge refuse, naming it")
    func brokenShardsAreRefused() async throws {
        let run = try EndToEndRun(profile: Self.profile)
        let (results, directories, _) = try await Self.runShards(run)
        #expect(results.map(\.exitCode) == [0, 0])

        // Shard 1's manifest says it reached no backend (as a shard whose every attempt failed writes it).
        let manifestURL = URL(fileURLWithPath: directories[1]).appendingPathComponent("shard.json")
        var manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
        var health = try #require(manifest["health"] as? [[String: Any]])
        let reached = try #require(health.firstIndex { $0["expression"] as? String == "shard.reached_backend" })
        health[reached]["passed"] = false
        health[reached]["message"] = "none of the shard's 12 attempts got an HTTP response"
        manifest["health"] = health
        try JSONSerialization.data(withJSONObject: manifest).write(to: manifestURL)
        let out = run.directory.appendingPathComponent("merged")
        let refused = Self.merge(directories, into: out)
        #expect(refused.exitCode == 2)
        #expect(refused.error?.contains("shard 1/2: none of the shard's 12 attempts") == true, "\(refused.error ?? "")")
        #expect(refused.error?.contains("--allow-partial") == true)
        let partial = Self.merge(directories, into: out, allowPartial: true)
        #expect(partial.exitCode == 0)
        #expect(partial.summary?.notes.contains { $0.hasPrefix("shard 1/2: none of the shard's") } == true)

        // A shard killed mid-run: its directory holds the streamed CSVs but no shard.json.
        try FileManager.default.removeItem(at: manifestURL)
        let killed = Self.merge(directories, into: out)
        #expect(killed.exitCode == 2)
        #expect(killed.error?.contains("\(directories[1]) has no shard.json") == true, "\(killed.error ?? "")")
    }

    @Test("a shard's health fails when no attempt got a response or its generator used the cores")
    func healthRows() async throws {
        let run = try EndToEndRun(profile: Self.profile)
        let (results, _, _) = try await Self.runShards(run)
        var summary = try #require(results.first?.summary)
        #expect(ShardHealth.rows(summary, cpuShare: 0.2).allSatisfy { $0.passed })
        let saturated = ShardHealth.rows(summary, cpuShare: 0.95)
        #expect(saturated.filter { !$0.passed }.map(\.expression) == ["shard.generator_cpu_share <= 0.9"])
        for name in summary.endpoints.keys {
            let attempts = summary.endpoints[name]?.attempts ?? 0
            summary.endpoints[name]?.byStatus = ["cannot_connect": attempts]
        }
        let unreachable = ShardHealth.rows(summary, cpuShare: 0.2)
        #expect(unreachable.filter { !$0.passed }.map(\.expression) == ["shard.reached_backend"])
        summary.journeys.started = 0
        #expect(ShardHealth.rows(summary, cpuShare: nil).first?.passed == false)
    }
}
