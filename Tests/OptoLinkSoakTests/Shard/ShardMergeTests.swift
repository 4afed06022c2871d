import Foundation
import OptoLink
import Synchronization
import Testing

@testable import OptoLinkSoak
import SoakRecords
import SoakVerdicts
import SoakReports
import SoakSupport
import SoakTestSupport

/// Shard report directories written by hand (a manifest and two CSVs), for `merge`.
struct ShardFixture {
    let root: URL

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("shard-merge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: root) }

    static func profile(limits: String = "{}", thresholds: String = "[]", seed: Int = 3) throws -> SoakProfile {
        let json = """
            {"name": "merge", "seed": \(seed), "devices": {"count": 12},
             "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}]}],
             "load": {"model": "open", "startRate": 10, "stages": [{"duration": 1, "target": 10}], "grace": 5},
             "expect": {"limits": \(limits), "thresholds": \(thresholds)}}
            """
        return try SoakProfile.decode(Data(json.utf8))
    }

    /// Writes shard `shard` of `profile` with these records under `root/name`; returns its path.
    @discardableResult
    func write(
        _ name: String, shard: SoakShard, profile: SoakProfile, attempts: [AttemptRecord] = [],
        calls: [CallRecord] = [], tally: RecorderTally? = nil, planHash: String? = nil, startEpoch: Double = 1_000,
        attribution: [AttributionRecord] = []
    ) throws -> String {
        let directory = root.appendingPathComponent(name, isDirectory: true)
        let attemptsWriter = try CSVStreamWriter(
            url: directory.appendingPathComponent("attempts.csv"), header: AttemptRecord.csvHeader)
        let callsWriter = try CSVStreamWriter(
            url: directory.appendingPathComponent("calls.csv"), header: CallRecord.csvHeader)
        for record in attempts { attemptsWriter.append(record.csvFields) }
        for record in calls { callsWriter.append(record.csvFields) }
        attemptsWriter.close()
        callsWriter.close()
        let manifest = ShardManifest(
            runId: "r1", shard: shard, planHash: planHash ?? ProfileFingerprint.of(profile), startEpoch: startEpoch,
            startAt: startEpoch, lateSeconds: 0, activeSeconds: 2, scheduled: 1, stopReason: .completed,
            interrupted: false, backend: "remote", baseURL: "http://127.0.0.1:1", transport: "native",
            profile: profile, tally: tally ?? Self.oneJourney,
            attribution: attribution, deviceIds: [:], launchDeviceIds: [:], rss: [])
        try AtomicFile.writeJSON(manifest, to: directory.appendingPathComponent(ShardManifest.fileName))
        return directory.path
    }

    /// A tally of one started journey (so "started no journey" is not what fails a merge).
    static var oneJourney: RecorderTally {
        var tally = RecorderTally(interval: 1, lateThreshold: 0.01)
        tally.journeysStarted = 1
        tally.journeysCompleted = 1
        return tally
    }

    func merge(_ directories: [String], allowPartial: Bool = false) -> (MergeCommand.Result, [String]) {
        var options = MergeOptions(directories: directories)
        options.outDirectory = root.appendingPathComponent("merged-\(UUID().uuidString)").path
        options.allowPartial = allowPartial
        let messages = Mutex<[String]>([])
        let result = MergeCommand.run(options) { line in messages.withLock { $0.append(line) } }
        return (result, messages.withLock { $0 })
    }
}

@Suite("merge")
struct ShardMergeTests {
    @Test("shards of different plans are refused, naming each directory's hash")
    func mixedPlansAreRefused() throws {
        let fixture = try ShardFixture()
        defer { fixture.remove() }
        let a = try fixture.write("a", shard: SoakShard(index: 0, count: 2), profile: ShardFixture.profile(seed: 3))
        let b = try fixture.write("b", shard: SoakShard(index: 1, count: 2), profile: ShardFixture.profile(seed: 4))
        let (result, _) = fixture.merge([a, b])
        #expect(result.exitCode == 2)
        #expect(result.error?.contains("different plans") == true)
        #expect(result.error?.contains(a) == true && result.error?.contains(b) == true)
        #expect(!FileManager.default.fileExists(atPath: fixture.root.appendingPathComponent("merged").path))
    }

    @Test("the same shard given twice is refused")
    func duplicateShardIsRefused() throws {
        let fixture = try ShardFixture()
        defer { fixture.remove() }
        let profile = try ShardFixture.profile()
        let a = try fixture.write("a", shard: SoakShard(index: 1, count: 3), profile: profile)
        let b = try fixture.write("b", shard: SoakShard(index: 1, count: 3), profile: profile)
        let c = try fixture.write("c", shard: SoakShard(index: 0, count: 3), profile: profile)
        let (result, _) = fixture.merge([c, a, b], allowPartial: true)
        #expect(result.exitCode == 2)
        #expect(result.error?.contains("shard 1/3 is given twice") == true)
    }

    @Test("a missing shard is refused; with --allow-partial it is merged and the report names what is missing")
    func missingShard() throws {
        let fixture = try ShardFixture()
        defer { fixture.remove() }
        let profile = try ShardFixture.profile()
        let a = try fixture.write("a", shard: SoakShard(index: 0, count: 4), profile: profile)
        let c = try fixture.write("c", shard: SoakShard(index: 2, count: 4), profile: profile)
        let (refused, _) = fixture.merge([a, c])
        #expect(refused.exitCode == 2)
        #expect(refused.error?.contains("missing shards 1/4, 3/4") == true)
        #expect(refused.error?.contains("--allow-partial") == true)

        // A shard that started but never wrote its report: its directory has no shard.json.
        let unfinished = fixture.root.appendingPathComponent("b")
        try FileManager.default.createDirectory(at: unfinished, withIntermediateDirectories: true)
        #expect(fixture.merge([a, unfinished.path, c]).0.error?.contains("not a shard's report") == true)
        let (partial, _) = fixture.merge([a, unfinished.path, c], allowPartial: true)
        let summary = try #require(partial.summary)
        #expect(summary.run.shards?.merged == [0, 2])
        #expect(summary.run.shards?.missing == [1, 3])
        #expect(summary.notes.first?.hasPrefix("PARTIAL: shards 1/4, 3/4 missing") == true)
        #expect(summary.notes.contains { $0.hasPrefix(unfinished.path) && $0.contains("left out") })
        let directory = try #require(partial.directory)
        let text = try String(contentsOf: directory.appendingPathComponent("summary.txt"), encoding: .utf8)
        #expect(text.contains("PARTIAL"))
        for file in ["summary.json", "report.html", "profile.json"] {
            #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent(file).path))
        }
    }

    @Test("shards that split the plan differently, and a directory that is not a shard's report, are refused")
    func otherRefusals() throws {
        let fixture = try ShardFixture()
        defer { fixture.remove() }
        let profile = try ShardFixture.profile()
        let a = try fixture.write("a", shard: SoakShard(index: 0, count: 2), profile: profile)
        let b = try fixture.write("b", shard: SoakShard(index: 1, count: 3), profile: profile)
        #expect(fixture.merge([a, b]).0.error?.contains("split the plan differently") == true)
        let plain = fixture.root.appendingPathComponent("plain")
        try FileManager.default.createDirectory(at: plain, withIntermediateDirectories: true)
        let (result, _) = fixture.merge([a, plain.path])
        #expect(result.exitCode == 2)
        #expect(result.error?.contains("not a shard's report") == true)
    }

    /// Values no run writes in a shard.json (edited or damaged) are refused, naming the file and the
    /// value; they trapped (interval 0, a count or slot near Int.max, shard count -1) or allocated
    /// gigabytes (slot 2e8, shard count 1e12).
    @Test(arguments: [
        ("interval", "tally.interval 0.0"), ("slot", "slot 9223372036854775807"), ("bigSlot", "slot 200000000"),
        ("count", "a count of 9223372036854775807"), ("shards", "shard 0/-1"), ("manyShards", "shard 0/1000000000000"),
        ("late", "lateSeconds 1e+300"),
    ])
    func impossibleManifestValuesAreRefused(_ field: String, _ message: String) throws {
        let fixture = try ShardFixture()
        defer { fixture.remove() }
        let profile = try ShardFixture.profile()
        var tally = ShardFixture.oneJourney
        var shard = SoakShard(index: 0, count: 1)
        switch field {
        case "interval": tally.interval = 0
        case "slot": tally.intervals = [RecorderTally.Interval(slot: .max)]
        case "bigSlot": tally.intervals = [RecorderTally.Interval(slot: 200_000_000)]
        case "count": tally.attempts = .max
        case "shards": shard = SoakShard(index: 0, count: -1)
        case "manyShards": shard = SoakShard(index: 0, count: 1_000_000_000_000)
        default: break
        }
        let a = try fixture.write("a", shard: shard, profile: profile, tally: tally)
        if field == "late" {
            let file = URL(fileURLWithPath: a).appendingPathComponent(ShardManifest.fileName)
            var manifest = try ShardManifest.load(URL(fileURLWithPath: a))
            manifest.lateSeconds = 1e300
            try AtomicFile.writeJSON(manifest, to: file)
        }
        let (result, _) = fixture.merge([a])
        #expect(result.exitCode == 2)
        #expect(result.error?.contains(message) == true, "\(String(describing: result.error))")
    }

    /// Shards that started further apart than they ran are two runs, not one: refused (a shard
    /// re-run 30 days later made a 562 MB summary and 3.2 GB of memory).
    @Test func shardsThatDidNotRunTogetherAreRefused() throws {
        let fixture = try ShardFixture()
        defer { fixture.remove() }
        let profile = try ShardFixture.profile()
        let a = try fixture.write("a", shard: SoakShard(index: 0, count: 2), profile: profile, startEpoch: 1_000)
        let b = try fixture.write("b", shard: SoakShard(index: 1, count: 2), profile: profile, startEpoch: 1_030)
        #expect(fixture.merge([a, b]).0.exitCode == 0, "30 s apart: one run")
        let late = try fixture.write(
            "late", shard: SoakShard(index: 1, count: 2), profile: profile, startEpoch: 1_000 + 30 * 86_400)
        let (result, _) = fixture.merge([a, late])
        #expect(result.exitCode == 2)
        #expect(result.error?.contains("they are not one run") == true, "\(String(describing: result.error))")
    }

    @Test("the command line: merge needs --out and directories; run --shard needs --base-url and says why")
    func commandLine() throws {
        #expect(throws: SoakUsageError.self) { try SoakCommandLine.parse(["merge", "a", "b"]) }
        #expect(throws: SoakUsageError.self) { try SoakCommandLine.parse(["merge", "--out", "m"]) }
        let merge = try SoakCommandLine.parse(["merge", "a", "b", "--out", "m", "--allow-partial"])
        guard let options = merge.subcommand(MergeSubcommand.self)?.options else {
            Issue.record("not a merge: \(merge)")
            return
        }
        #expect(options.directories == ["a", "b"] && options.outDirectory == "m" && options.allowPartial)
        #expect {
            try SoakCommandLine.parse(["run", "p.json", "--shard", "0/2"])
        } throws: { error in
            "\(error)".contains("needs --base-url") && "\(error)".contains("shared backend")
        }
        for bad in ["2/2", "-1/2", "1", "a/b", "0/0"] {
            #expect(throws: SoakUsageError.self) {
                try SoakCommandLine.parse(["run", "p.json", "--base-url", "http://127.0.0.1:1", "--shard", bad])
            }
        }
        let run = try SoakCommandLine.parse([
            "run", "p.json", "--base-url", "http://127.0.0.1:1", "--shard", "2/3", "--start-at", "1800000000",
            "--run-id", "nightly-7",
        ])
        guard let runOptions = run.subcommand(RunSubcommand.self)?.options else {
            Issue.record("not a run: \(run)")
            return
        }
        #expect(runOptions.shard == SoakShard(index: 2, count: 3))
        #expect(runOptions.startAt == 1_800_000_000 && runOptions.runId == "nightly-7")
        #expect(throws: SoakUsageError.self) {
            try SoakCommandLine.parse(["run", "p.json", "--processes", "2", "--shard", "0/2", "--base-url", "http://h"])
        }
        #expect(throws: SoakUsageError.self) { try SoakCommandLine.parse(["run", "p.json", "--run-id", "a:b"]) }
    }

    @Test("the library refuses --shard without --base-url too, before starting anything")
    func libraryRefusesShardWithoutBaseURL() async throws {
        let run = try EndToEndRun(profile: e2eProfile(devices: 4, rate: 4, steps: #"{"kind": "firstLaunch"}"#))
        let soak = run.makeRun { $0.shard = SoakShard(index: 0, count: 2) }
        let result = await soak.execute()
        #expect(result.exitCode == 2)
        #expect(result.error?.contains("needs --base-url") == true)
        #expect(run.server == nil)
    }

    /// Six accepted `/match` hits from one client IP within 0.25 s: three in each shard.
    static func hits(shard: Int) -> [AttemptRecord] {
        (0..<3).map { i in
            let start = Double(i) * 0.1 + Double(shard) * 0.05
            return Fixture.attempt(
                .match, device: "d00000\(shard + 1)", launch: 1, call: UInt64(i + 1), start: start, end: start + 0.001,
                status: 201, ip: "10.0.0.1")
        }
    }

    static func calls(for attempts: [AttemptRecord]) -> [CallRecord] {
        attempts.map { a in
            CallRecord(
                device: a.device, launch: a.launch, callId: a.callId, endpoint: a.endpoint, attempts: 1,
                intendedStart: a.intendedStart, start: a.actualStart, end: a.end, outcome: .ok, finalStatus: a.status,
                correlationId: nil)
        }
    }

    @Test("each shard stays under a per-IP limit, their sum crosses it: only the merge reports the breach and fails")
    func limitBreachOnlyVisibleInTheWhole() throws {
        let fixture = try ShardFixture()
        defer { fixture.remove() }
        let profile = try ShardFixture.profile(
            limits: #"{"match": "5/2s per ip"}"#, thresholds: #"["limits.match.too_lenient == 0"]"#)
        var directories: [String] = []
        for shard in 0..<2 {
            let attempts = Self.hits(shard: shard)
            let alone = LimitOracleVerdict.evaluate(attempts, configuration: profile.expect)
            #expect(alone.buckets["match"]?.tooLenient == 0, "shard \(shard) alone is within the limit")
            directories.append(
                try fixture.write(
                    "s\(shard)", shard: SoakShard(index: shard, count: 2), profile: profile, attempts: attempts,
                    calls: Self.calls(for: attempts)))
        }
        let (result, _) = fixture.merge(directories)
        let summary = try #require(result.summary)
        #expect(summary.verdicts?.limits.buckets["match"]?.tooLenient == 1)
        #expect(summary.metrics["limits.match.too_lenient"] == 1)
        #expect(summary.thresholds.map(\.expression) == ["limits.match.too_lenient == 0"])
        #expect(summary.thresholds.first?.passed == false)
        #expect(result.exitCode == 1)
        #expect(summary.run.shards?.streamed == true)

        // The same shards judged at merge time without the profile's threshold but with another.
        var options = MergeOptions(directories: directories)
        options.outDirectory = fixture.root.appendingPathComponent("rejudged").path
        options.noThresholds = true
        options.extraThresholds = ["limits.match.too_lenient <= 1"]
        let rejudged = MergeCommand.run(options) { _ in }
        #expect(rejudged.exitCode == 0)
        #expect(rejudged.summary?.thresholds.map(\.expression) == ["limits.match.too_lenient <= 1"])
        options.extraThresholds = ["limits.match.too_lenient <"]
        #expect(MergeCommand.run(options) { _ in }.error?.contains("--threshold 'limits.match.too_lenient <'") == true)
    }

    /// A varied run: per device one match (some rate limited and retried after Retry-After,
    /// some retried too early), events with correlation ids, session calls; devices spread over 4 IPs.
    static func richRun() -> (attempts: [AttemptRecord], calls: [CallRecord]) {
        var attempts: [AttemptRecord] = []
        var calls: [CallRecord] = []
        var rng = SeededRandom(seed: 99)
        for n in 0..<60 {
            let device = "d" + String(format: "%06d", n + 1)
            let ip = "10.0.0.\(n % 4)"
            var time = Double(n) * 0.05 + rng.unit() * 0.01
            for (callId, endpoint) in [(UInt64(1), ContractEndpoint.match), (2, .session), (3, .events)] {
                let limited = endpoint == .match && n % 3 == 0
                let statuses: [(Int, Int?)] =
                    limited ? [(429, 1), (201, nil)] : [(endpoint == .events ? 202 : 201, nil)]
                let start = time
                for (index, (status, retryAfter)) in statuses.enumerated() {
                    let duration = 0.002 + rng.unit() * 0.01
                    var a = Fixture.attempt(
                        endpoint, device: device, call: callId, attempt: index + 1, start: time, end: time + duration,
                        status: status, retryAfter: retryAfter, ip: ip)
                    if endpoint == .events { a.correlationId = "r1:\(device):\(callId)" }
                    attempts.append(a)
                    time += duration + (retryAfter.map { Double($0) + (n % 2 == 0 ? 0.05 : -0.3) } ?? 0.001)
                }
                calls.append(
                    CallRecord(
                        device: device, launch: 1, callId: callId, endpoint: endpoint, attempts: statuses.count,
                        intendedStart: start, start: start, end: attempts.last?.end ?? start, outcome: .ok,
                        finalStatus: statuses.last?.0,
                        correlationId: endpoint == .events ? "r1:\(device):\(callId)" : nil, deviceId: "id-\(device)"))
            }
        }
        return (attempts, calls)
    }

    @Test("verdicts of three shards merged equal the verdicts of the whole run, to the last count")
    func mergedVerdictsEqualTheWhole() throws {
        let fixture = try ShardFixture()
        defer { fixture.remove() }
        let profile = try ShardFixture.profile(limits: #"{"match": "3/2s per ip", "events": "4/1s per ip"}"#)
        let (attempts, calls) = Self.richRun()
        let whole = Verdicts.evaluate(
            VerdictInputs(
                attempts: attempts, calls: calls, ledger: nil, configuration: profile.expect,
                maxRetries: profile.sdk.maxRetries, runStartEpoch: 1_000))
        #expect(
            whole.backoff.rateLimited.checked > 0 && whole.backoff.rateLimited.early > 0,
            "the run exercises the back-off verdict")
        #expect(whole.limits.buckets["match"]?.rejected ?? 0 > 0, "and the limit oracle")
        var directories: [String] = []
        for shard in 0..<3 {
            let mine = { (device: String) in (Int(device.dropFirst()) ?? 0 - 1) % 3 == shard }
            directories.append(
                try fixture.write(
                    "s\(shard)", shard: SoakShard(index: shard, count: 3), profile: profile,
                    attempts: attempts.filter { mine($0.device) }, calls: calls.filter { mine($0.device) }))
        }
        let (result, _) = fixture.merge(directories.reversed())
        let merged = try #require(result.summary?.verdicts)
        #expect(merged == whole)
        #expect(result.summary?.run.shards?.merged == [0, 1, 2])
    }

    @Test("rows further out of order than the reorder window widen it; past its bound they are sorted; same verdicts")
    func outOfOrderRows() throws {
        let fixture = try ShardFixture()
        defer { fixture.remove() }
        let profile = try ShardFixture.profile(limits: #"{"match": "3/2s per ip"}"#)
        let (attempts, calls) = Self.richRun()
        let whole = Verdicts.evaluate(
            VerdictInputs(
                attempts: attempts, calls: calls, ledger: nil, configuration: profile.expect, runStartEpoch: 1_000))
        let context = VerdictContext(configuration: profile.expect, maxRetries: 2, runStartEpoch: 1_000)
        // The calls file in reverse: the first call rows read lie ~3.8 s after the last ones.
        let reversed = try fixture.write(
            "reversed", shard: .whole, profile: profile, attempts: attempts, calls: calls.reversed())
        let manifest = try ShardManifest.load(URL(fileURLWithPath: reversed))
        let plan = MergeCommand.Plan(shards: [(URL(fileURLWithPath: reversed), manifest)], count: 1, missing: [])

        let sorted = try MergeCommand.evaluate(
            plan, shifts: [0], attribution: [], context: context, window: 0.5, maxWindow: 1)
        let fellBack = !sorted.streamed
        #expect(fellBack)
        let reason = sorted.fallbackReason ?? ""
        #expect(reason.contains(reversed) && reason.contains("beyond the 1.000000 s reorder window"))
        let sortedReport = sorted.report
        #expect(sortedReport == whole)

        let widened = try MergeCommand.evaluate(plan, shifts: [0], attribution: [], context: context, window: 0.5)
        let streamed = widened.streamed
        let window = widened.window ?? 0
        #expect(streamed && window > 3.5)
        let widenedReport = widened.report
        #expect(widenedReport == whole)

        // The same rows in write order (each call after its attempts; a retried match ends ~1.1 s
        // after the next device's rows) stream within a 2 s window as they are.
        let inOrderDirectory = try fixture.write(
            "in-order", shard: .whole, profile: profile, attempts: attempts, calls: calls)
        let inOrder = try MergeCommand.evaluate(
            MergeCommand.Plan(shards: [(URL(fileURLWithPath: inOrderDirectory), manifest)], count: 1, missing: []),
            shifts: [0], attribution: [], context: context, window: 2)
        let inOrderWindow = inOrder.window
        #expect(inOrderWindow == 2)
        let inOrderReport = inOrder.report
        #expect(inOrderReport == whole)
    }
}
