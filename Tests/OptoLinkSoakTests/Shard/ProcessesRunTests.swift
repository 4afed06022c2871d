import Foundation
import Synchronization
import Testing

import OptoLinkSoak

@Suite("shards and processes")
struct ProcessesRunTests {
    @Test("shards split journeys and a closed model's budget without overlap or loss", arguments: [1, 2, 3, 7])
    func shardsPartitionThePlan(count: Int) {
        let shards = (0..<count).map { SoakShard(index: $0, count: count) }
        for k in 0..<100 { #expect(shards.filter { $0.owns(k) }.count == 1, "journey \(k)") }
        for total in [0, 1, 5, 99, 100] {
            #expect(shards.map { $0.share(of: total) }.reduce(0, +) == total)
            #expect(
                (shards.map { $0.share(of: total) }.max() ?? 0) - (shards.map { $0.share(of: total) }.min() ?? 0) <= 1)
        }
        #expect(shards.allSatisfy { $0.share(of: .max) == .max })
    }

    @Test("a shard process gets the parent's plan flags plus its identity, the shared start and the backend")
    func shardArguments() throws {
        var options = SoakRunOptions(profilePath: "p.json")
        options.devices = 40
        options.seed = 9
        options.rate = 12.5
        options.extraThresholds = ["http.errors.rate < 0.01"]
        options.processes = 3
        let args = ProcessesRun.shardArguments(
            options, shard: SoakShard(index: 2, count: 3), startAt: 1_800_000_000, runId: "abc",
            baseURL: URL(string: "http://127.0.0.1:4000")!, out: URL(fileURLWithPath: "/r/shard-2"))
        guard let parsed = try SoakCommandLine.parse(args).subcommand(RunSubcommand.self)?.options else {
            Issue.record("not a run: \(args)")
            return
        }
        #expect(parsed.shard == SoakShard(index: 2, count: 3))
        #expect(parsed.startAt == 1_800_000_000 && parsed.runId == "abc")
        #expect(parsed.baseURL?.absoluteString == "http://127.0.0.1:4000" && parsed.outDirectory == "/r/shard-2")
        #expect(parsed.devices == 40 && parsed.seed == 9 && parsed.rate == 12.5)
        #expect(parsed.extraThresholds == options.extraThresholds && parsed.processes == nil)
        // --connections is the machine's total: 128 over 3 shards is 43 + 43 + 42.
        #expect(parsed.connections == 42)
        // The shards share the machine's cores; an explicit --client-loops goes to each as given.
        #expect(parsed.clientLoops == Swift.max(1, SoakClientLoops.default() / 3))
        options.clientLoops = 5
        let explicit = ProcessesRun.shardArguments(
            options, shard: SoakShard(index: 0, count: 3), startAt: 1_800_000_000, runId: "abc",
            baseURL: URL(string: "http://127.0.0.1:4000")!, out: URL(fileURLWithPath: "/r/shard-0"))
        guard let withLoops = try SoakCommandLine.parse(explicit).subcommand(RunSubcommand.self)?.options else {
            return
        }
        #expect(withLoops.clientLoops == 5)
        #expect(withLoops.connections == 43)
        options.connections = 2
        let few = ProcessesRun.shardArguments(
            options, shard: SoakShard(index: 2, count: 3), startAt: 1_800_000_000, runId: "abc",
            baseURL: URL(string: "http://127.0.0.1:4000")!, out: URL(fileURLWithPath: "/r/shard-2"))
        guard let withFew = try SoakCommandLine.parse(few).subcommand(RunSubcommand.self)?.options else { return }
        #expect(withFew.connections == 1, "a shard keeps at least one connection")
    }

    /// The `optolink-soak` executable built beside the test bundle.
    static var executable: URL? {
        // The test runner is `.build/<config>/OptoLinkPackageTests.xctest` (a file on Linux, a bundle on macOS).
        let runner = ProcessesRun.ownExecutable()
        for candidate in [runner.deletingLastPathComponent(), Bundle.main.bundleURL.deletingLastPathComponent()] {
            let url = candidate.appendingPathComponent("optolink-soak")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }

    @Test("--processes 2 interrupted mid-run: the shards stop, the parent still merges what they wrote, exit 130")
    func interruptedParentStillMerges() async throws {
        let executable = try #require(Self.executable, "build the optolink-soak product (swift build --build-tests)")
        let run = try EndToEndRun(
            profile: e2eProfile(
                devices: 20, rate: 0.5,
                steps: #"{"kind": "firstLaunch"}, {"kind": "wait", "seconds": 0.2}, {"kind": "event", "name": "e"}"#))
        var options = SoakRunOptions(profilePath: run.profileURL.path)
        options.processes = 2
        options.outDirectory = run.reportDirectory.path
        options.progress = false
        let control = RunControl()
        var processes = ProcessesRun(options: options, control: control)
        processes.executable = executable
        processes.startLead = 1
        let messages = Mutex<[String]>([])
        processes.log = { line in messages.withLock { $0.append(line) } }
        // Stop 1 s after both shards have started their plans (their run line is in their logs),
        // from a plain thread, so neither a slow machine nor a busy cooperative pool moves it. The
        // plan spans 40 s (20 journeys at 0.5/s), so a shard seconds late on a loaded machine
        // still has journeys left to not start.
        let shards = run.reportDirectory.appendingPathComponent("shards")
        DispatchQueue.global().async {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let started = (0..<2).filter { index in
                    let log = try? String(
                        contentsOf: shards.appendingPathComponent("shard-\(index).log"), encoding: .utf8)
                    return log?.contains("open model") ?? false
                }
                if started.count == 2 { break }
                usleep(50_000)
            }
            usleep(1_000_000)
            control.stop(.interrupted)
        }
        let result = await processes.execute()
        let logs = (0..<2).map { index in
            (try? String(
                contentsOf: run.reportDirectory.appendingPathComponent("shards/shard-\(index).log"), encoding: .utf8))
                ?? "(no log)"
        }
        #expect(result.exitCode == 130, "\(messages.withLock { $0 }) \(logs)")
        let summary = try #require(result.summary)
        #expect(summary.run.interrupted)
        #expect(summary.run.shards?.merged == [0, 1])
        #expect(summary.run.backend == "embedded")
        #expect(summary.journeys.started > 0 && summary.journeys.started < 20, "stopped before the plan's end")
        #expect(summary.verdicts?.reconciliation.available == true, "the parent's emulator ledger was used")
        for index in 0..<2 {
            let shard = run.reportDirectory.appendingPathComponent("shards/shard-\(index)")
            #expect(FileManager.default.fileExists(atPath: shard.appendingPathComponent("shard.json").path))
            #expect(FileManager.default.fileExists(atPath: shard.path + ".log"))
        }
        #expect(FileManager.default.fileExists(atPath: run.reportDirectory.appendingPathComponent("summary.json").path))
        // The merged report keeps the shards' rows and the emulator ledger its reconciliation used.
        func lines(_ name: String) throws -> Int {
            try String(contentsOf: run.reportDirectory.appendingPathComponent(name), encoding: .utf8)
                .split(separator: "\n").count
        }
        #expect(try lines("attempts.csv") - 1 == summary.totals.attempts)
        #expect(try lines("ledger.jsonl") == summary.server?.ledgerEntries)
    }
}
