import Foundation
import OptoLink
import Synchronization
import Testing

import OptoLinkSoak
import SoakRecords
import SoakVerdicts
import SoakReports
import SoakSupport
import SoakTestSupport

@Suite("compare: regression rules")
struct RegressionRuleTests {
    @Test(
        "rules with baseline evaluate against both runs",
        arguments: [
            ("match.call_latency.p95 < baseline * 1.10", 0.020, 0.0219, true),
            ("match.call_latency.p95 < baseline * 1.10", 0.020, 0.0221, false),
            ("events.429.rate <= baseline + 0.01", 0.05, 0.06, true),
            ("events.429.rate <= baseline + 0.01", 0.05, 0.0601, false),
            ("backoff.early == 0", 7, 0, true),
            ("match.call_latency.p99 <= (baseline + 5ms) * 1.5", 0.010, 0.0225, true),
            ("match.call_latency.p99 <= (baseline + 5ms) * 1.5", 0.010, 0.0226, false),
            ("http.429.rate < baseline + 1%", 0.02, 0.0299, true),
            ("http.requests >= baseline / 2 - -1", 100, 51, true),
        ])
    func evaluates(expression: String, baseline: Double, current: Double, passes: Bool) throws {
        let rule = try RegressionRule(expression)
        let check = rule.evaluate(baseline: [rule.metric: baseline], current: [rule.metric: current])
        #expect(check.passed == passes, "\(check)")
        #expect(check.message == nil)
    }

    @Test(
        "malformed rules are refused with the problem in words",
        arguments: [
            ("match.call_latncy.p95 < baseline", "did you mean match.call_latency.p95?"),
            ("backoff.early baseline", "no operator"),
            ("match.call_latency.p95 < baseline * x", "bad term 'x'"),
            ("match.call_latency.p95 < (baseline * 2", "missing ')'"),
            ("match.call_latency.p95 < baseline 2", "unexpected '2'"),
            ("match.call_latency.p95 < ", "ends too early"),
        ])
    func refuses(expression: String, fragment: String) {
        #expect {
            try RegressionRule(expression)
        } throws: { error in
            "\(error)".contains(fragment)
        }
    }

    @Test("a metric missing in one run fails its rule with a message instead of passing")
    func missingMetric() throws {
        let rule = try RegressionRule("reconcile.lost <= baseline")
        let check = rule.evaluate(baseline: [:], current: ["reconcile.lost": 0])
        #expect(!check.passed && check.message == "metric 'reconcile.lost' not available in the baseline run")
        let zero = try RegressionRule("http.requests < 1 / (baseline - baseline)")
        #expect(!zero.evaluate(baseline: ["http.requests": 1], current: ["http.requests": 1]).passed)
    }

    @Test("expect.regression is decoded and checked with the profile; a bad rule names its index")
    func profileSection() throws {
        let good = try SoakProfile.decode(Data(Self.profile(#"["match.call_latency.p95 < baseline * 1.1"]"#).utf8))
        #expect(good.expect.regression == ["match.call_latency.p95 < baseline * 1.1"])
        #expect {
            try SoakProfile.decode(Data(Self.profile(#"["backoff.early == 0", "match.p95 < baseline"]"#).utf8))
        } throws: { error in
            "\(error)".hasPrefix("expect.regression[1]:") && "\(error)".contains("unknown metric")
        }
    }

    static func profile(_ regression: String) -> String {
        """
        {"name": "r", "devices": {"count": 1}, "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}]}],
         "load": {"model": "closed", "iterations": 1}, "expect": {"regression": \(regression)}}
        """
    }

    @Test("SHA-256 of known vectors; the profile fingerprint ignores thresholds but not the workload")
    func fingerprint() throws {
        #expect(SHA256.hex(Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let long = Data(String(repeating: "a", count: 1000).utf8)
        #expect(SHA256.hex(long) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
        var profile = try SoakProfile.load(contentsOf: URL(fileURLWithPath: "Profiles/smoke.json"))
        let base = ProfileFingerprint.of(profile)
        profile.expect.thresholds.append("backoff.early == 0")
        profile.expect.regression = ["backoff.early == 0"]
        #expect(ProfileFingerprint.of(profile) == base)
        profile.devices.count += 1
        #expect(ProfileFingerprint.of(profile) != base)
    }

    @Test("every shipped profile survives profile.json: encoded, it decodes to the same profile")
    func profileRoundTrip() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: "Profiles").filter { $0.hasSuffix(".json") }
        #expect(!files.isEmpty)
        for file in files {
            let profile = try SoakProfile.load(contentsOf: URL(fileURLWithPath: "Profiles/\(file)"))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let again = try SoakProfile.decode(try encoder.encode(profile))
            #expect(again == profile, "\(file)")
        }
    }
}

/// Reports built from one real run on the embedded emulator (/match slowed to ~30 ms by a latency
/// fault, so a 30 % shift is larger than the 2 ms floor), split in two halves by device.
@Suite("compare: real runs", .serialized, .timeLimit(.minutes(2)))
struct CompareRunTests {
    static let profileJSON = """
        {"name": "cmp", "seed": 9,
         "devices": {"count": 400, "clipboardSurvives": 1},
         "journeys": [{"name": "j", "steps": [{"kind": "click", "link": "welcome"}, {"kind": "firstLaunch"},
                                              {"kind": "event", "name": "e", "repeat": 2}]}],
         "load": {"model": "open", "startRate": 200, "stages": [{"duration": 2, "target": 200}], "iterations": 400,
                  "grace": 10},
         "sdk": {"timeout": 3},
         "backend": {"limits": {"session_identity": {"limit": 100000, "windowSeconds": 60},
                                "events": {"limit": 100000, "windowSeconds": 60}},
                     "faults": {"endpoints": {"match": [{"kind": "latency", "rate": 1, "delaySeconds": 0.03}]}}},
         "expect": {"thresholds": []}}
        """

    /// A copy of `report` whose endpoint histograms and counts come from the rows of the devices
    /// `keep` selects, latencies of `scaled` multiplied by `factor`.
    static func half(
        _ report: SoakReportDirectory, attempts: [AttemptRecord], calls: [CallRecord], keep: (String) -> Bool,
        scaled: ContractEndpoint? = nil, factor: Double = 1
    ) -> SoakReportDirectory {
        var summary = report.summary
        var endpoints: [String: SoakSummary.EndpointSummary] = [:]
        var samples = LatencySamples()
        for endpoint in ContractEndpoint.allCases {
            let f = endpoint == scaled ? factor : 1
            let rows = attempts.filter { $0.endpoint == endpoint && keep($0.device) }
            let callRows = calls.filter { $0.endpoint == endpoint && keep($0.device) }
            guard !rows.isEmpty else { continue }
            var attemptLatency = LatencyHistogram()
            var fromIntended = LatencyHistogram()
            var callLatency = LatencyHistogram()
            var byStatus: [String: Int] = [:]
            for r in rows {
                attemptLatency.record((r.end - r.actualStart) * f)
                samples.add(
                    (r.end - r.actualStart) * f, startedAt: r.actualStart,
                    to: LatencySamples.key(endpoint: endpoint.rawValue, kind: "attempt"))
                fromIntended.record((r.end - r.intendedStart) * f)
                byStatus[r.status.map(String.init) ?? r.errorKind?.rawValue ?? "other", default: 0] += 1
            }
            for c in callRows where c.outcome.isFinished {
                callLatency.record((c.end - c.intendedStart) * f)
                samples.add(
                    (c.end - c.intendedStart) * f, startedAt: c.intendedStart,
                    to: LatencySamples.key(endpoint: endpoint.rawValue, kind: "call"))
            }
            endpoints[endpoint.rawValue] = SoakSummary.EndpointSummary(
                attempts: rows.count, calls: callRows.count, byStatus: byStatus, callOutcomes: [:],
                attemptsPerCall: [:], attemptLatency: HistogramSummary(attemptLatency),
                attemptLatencyFromIntended: HistogramSummary(fromIntended), callLatency: HistogramSummary(callLatency),
                requestBytes: 0, responseBytes: 0)
        }
        summary.endpoints = endpoints
        var copy = report
        copy.summary = summary
        copy.samples = samples
        return copy
    }

    @Test("10 same-seed re-run pairs (one run split by device) are not flagged; +30 % on /match is, and only /match")
    func rerunsAndShift() async throws {
        let e2e = try EndToEndRun(profile: Self.profileJSON)
        let result = await e2e.makeRun().execute()
        #expect(result.exitCode == 0, "\(e2e.log)")
        let report = try SoakReportDirectory.load(e2e.reportDirectory)
        let attempts = try e2e.attempts()
        let calls = try e2e.calls()
        let match = try #require(report.summary.endpoints["match"])
        #expect(match.callLatency.p50 > 0.03, "the latency fault should slow /match to ≥ 30 ms")

        // The run's arrivals last 2 s: tenth-of-a-second blocks give each half enough blocks to judge.
        var rules = RegressionRules()
        rules.blockSeconds = 0.1
        var falseAlarms: [String] = []
        // Devices numbered d000000 … run on the native client's loops in turn (device i on loop
        // i mod loops), and under a saturated machine one loop can be slower than another for the
        // whole run. A re-run keeps every device on its loop, so each half takes half of every
        // loop's devices: otherwise a half with more devices of the slower loop is a real
        // difference, not a false alarm (it failed this test once in CI, and in 3 of 50 runs on a
        // saturated machine).
        let loops = UInt64(SoakClientLoops.default())
        let devices = Set(attempts.map(\.device)).sorted()
        for pair in 0..<10 {
            // Split by a seeded hash of the name, differently per pair, half of each loop's devices per side.
            let seed = UInt64(pair + 1)
            func digits(_ device: String) -> UInt64 { UInt64(device.dropFirst()) ?? 0 }
            func hash(_ device: String) -> UInt64 {
                var rng = SeededRandom(seed: seed &* 0x9E37_79B9 &+ digits(device))
                return rng.next()
            }
            var kept = Set<String>()
            for loop in 0..<loops {
                let group = devices.filter { digits($0) % loops == loop }.sorted { hash($0) < hash($1) }
                kept.formUnion(group.prefix(group.count / 2))
            }
            let keep: (String) -> Bool = { kept.contains($0) }
            let a = Self.half(report, attempts: attempts, calls: calls, keep: keep)
            let b = Self.half(report, attempts: attempts, calls: calls, keep: { !keep($0) })
            let comparison = SoakComparison.compare(baseline: a, current: b, rules: rules)
            if comparison.regressed {
                falseAlarms.append(
                    comparison.checks.filter { !$0.passed }.map { "\($0.name): \($0.message ?? "")" }
                        .joined(separator: "; "))
            }
        }
        // The whole run against itself with /match 30 % slower: the two reports differ by exactly that shift.
        let whole = Self.half(report, attempts: attempts, calls: calls, keep: { _ in true })
        let shifted = Self.half(
            report, attempts: attempts, calls: calls, keep: { _ in true }, scaled: .match, factor: 1.3)
        let flagged = SoakComparison.compare(baseline: whole, current: shifted, rules: rules)
        let matchCall = flagged.endpoints.first { $0.endpoint == "match" }?.latency.first { $0.kind == "call" }
        #expect(flagged.regressed, "+30 % on /match not flagged: \(matchCall?.reason ?? "")")
        let failedNames = Set(flagged.checks.filter { !$0.passed }.map(\.name))
        #expect(failedNames == ["match.attempt_latency", "match.call_latency"])
        #expect(abs((matchCall?.p95.relative ?? 0) - 0.3) < 0.03, "p95 shift \(String(describing: matchCall?.p95))")
        #expect(SoakComparison.compare(baseline: whole, current: whole, rules: rules).regressed == false)

        // The same shift while the soak process itself was slowed (start lag p99 ×5): inconclusive, not a regression…
        var busy = shifted
        busy.summary.journeys.startLag.p99 = max(whole.summary.journeys.startLag.p99 * 5, 0.03)
        let busier = SoakComparison.compare(baseline: whole, current: busy, rules: rules)
        #expect(busier.machineBusier && busier.inconclusive && !busier.regressed)
        #expect(
            busier.checks.filter { $0.inconclusive == true }.map(\.name).sorted() == [
                "match.attempt_latency", "match.call_latency",
            ])
        #expect(busier.markdown().contains("inconclusive"))
        // … but a verdict count that got worse is a regression whatever the machine did.
        busy.summary.metrics["retry.violations"] = (whole.summary.metrics["retry.violations"] ?? 0) + 1
        let worse = SoakComparison.compare(baseline: whole, current: busy, rules: rules)
        #expect(worse.regressed && worse.checks.contains { $0.name == "retry.violations" && !$0.passed })
        // Blocks of one run's halves share the machine's moments, so they rarely differ; a compare
        // that flags noise would flag most of the ten pairs; one is tolerated.
        #expect(falseAlarms.count <= 1, "false alarms: \(falseAlarms)")
    }

    @Test("CLI compare: files written, exit 0; a different profile exits 2 unless --force; unknown schema exits 2")
    func commandLine() async throws {
        let e2e = try EndToEndRun(profile: e2eProfile(devices: 30, rate: 60, steps: #"{"kind": "firstLaunch"}"#))
        #expect(await e2e.makeRun().execute().exitCode == 0, "\(e2e.log)")
        let base = e2e.reportDirectory
        let junit = e2e.directory.appendingPathComponent("compare.xml")
        // One directory as both sides is refused (a run compared with itself proves nothing); a copy is fine.
        #expect(
            CompareCommand.run(CompareOptions(baselinePath: base.path, currentPath: base.path)) { _ in }.exitCode == 2)
        let copy = e2e.directory.appendingPathComponent("copy")
        try FileManager.default.copyItem(at: base, to: copy)
        var options = CompareOptions(baselinePath: base.path, currentPath: copy.path)
        options.junitPath = junit.path
        options.outDirectory = e2e.directory.appendingPathComponent("cmp").path
        let same = CompareCommand.run(options) { _ in }
        #expect(same.exitCode == 0)
        #expect(same.comparison?.consoleLines.last == "result: no regression (exit 0)")
        // An existing comparison is not overwritten without --force.
        let again = MessageLog()
        #expect(CompareCommand.run(options, log: again.append).exitCode == 2)
        #expect(again.lines.contains { $0.contains("compare.json already exists") && $0.contains("--force") })
        for file in ["compare.json", "compare.md"] {
            #expect(FileManager.default.fileExists(atPath: e2e.directory.appendingPathComponent("cmp/\(file)").path))
        }
        let xml = try String(contentsOf: junit, encoding: .utf8)
        let structure = JUnitStructure.check(xml)
        #expect(structure.problems == [] && structure.cases == same.comparison?.checks.count)

        // Another profile: copy the report, change its fingerprint.
        let other = e2e.directory.appendingPathComponent("other")
        try FileManager.default.copyItem(at: base, to: other)
        var summary = try SoakReportDirectory.load(other).summary
        summary.run.profileHash = String(repeating: "0", count: 64)
        try AtomicFile.writeJSON(summary, to: other.appendingPathComponent("summary.json"))
        let messages = MessageLog()
        options.currentPath = other.path
        #expect(CompareCommand.run(options, log: messages.append).exitCode == 2)
        #expect(messages.lines.contains { $0.contains("profiles differ") && $0.contains("--force") })
        options.force = true
        let forced = CompareCommand.run(options) { _ in }
        #expect(forced.exitCode == 0 && forced.comparison?.forced == true)
        #expect(forced.comparison?.markdown().contains("compared anyway (`--force`)") == true)

        // A baseline written before the per-journey breakdowns existed still reads (same schemaVersion).
        let older = e2e.directory.appendingPathComponent("older")
        try FileManager.default.copyItem(at: base, to: older)
        var json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: older.appendingPathComponent("summary.json")))
                as? [String: Any])
        var journeys = try #require(json["journeys"] as? [String: Any])
        journeys["unfinishedByName"] = nil
        journeys["durationFromIntended"] = nil
        json["journeys"] = journeys
        try JSONSerialization.data(withJSONObject: json).write(to: older.appendingPathComponent("summary.json"))
        #expect(try SoakReportDirectory.load(older).summary.journeys.durationFromIntended.isEmpty)
        let withCurrent = try SoakReportDirectory.load(base)
        #expect(!withCurrent.summary.journeys.durationFromIntended.isEmpty)
        let journeyComparison = SoakComparison.compare(baseline: withCurrent, current: withCurrent)
        #expect(journeyComparison.journeys.map(\.name) == ["j"])
        #expect(journeyComparison.checks.contains { $0.name == "journey.j.duration" && $0.passed })

        // An unknown schema version is refused, naming the file and the version.
        let future = try String(contentsOf: other.appendingPathComponent("summary.json"), encoding: .utf8)
            .replacingOccurrences(of: "\"schemaVersion\" : 1", with: "\"schemaVersion\" : 99")
        try Data(future.utf8).write(to: other.appendingPathComponent("summary.json"))
        let refused = MessageLog()
        #expect(CompareCommand.run(options, log: refused.append).exitCode == 2)
        #expect(refused.lines.contains { $0.contains("schemaVersion 99 is not supported") })
        #expect(await OptoLinkSoak.main(["compare", base.path, "/nonexistent/report"]) == 2)
    }

    @Test("expect.regression in the current run's profile replaces the default rule; run --baseline exits 1 on it")
    func profileRules() async throws {
        let json = e2eProfile(devices: 20, rate: 60, steps: #"{"kind": "firstLaunch"}"#)
            .replacingOccurrences(
                of: #""expect": {"thresholds": []}"#,
                with:
                    #""expect": {"thresholds": [], "regression": ["http.requests == baseline", "match.attempts > baseline"]}"#
            )
        let e2e = try EndToEndRun(profile: json)
        #expect(await e2e.makeRun().execute().exitCode == 0, "\(e2e.log)")
        let baseline = e2e.directory.appendingPathComponent("baseline")
        try FileManager.default.moveItem(at: e2e.reportDirectory, to: baseline)
        let junit = e2e.directory.appendingPathComponent("run.xml")
        let result = await e2e.makeRun {
            $0.baselineDirectory = baseline.path
            $0.junitPath = junit.path
        }.execute()
        #expect(result.exitCode == 1, "\(e2e.log)")
        // summary.txt and summary.json tell the exit code, the comparison's regression included.
        let text = try String(contentsOf: e2e.reportDirectory.appendingPathComponent("summary.txt"), encoding: .utf8)
        #expect(text.hasPrefix("result: regression (exit 1)"), "\(text.prefix(200))")
        #expect(try SoakReportDirectory.load(e2e.reportDirectory).summary.result == .regression)
        let data = try Data(contentsOf: e2e.reportDirectory.appendingPathComponent("compare/compare.json"))
        let comparison = try JSONDecoder().decode(SoakComparison.self, from: data)
        #expect(comparison.rule == "profile")
        #expect(comparison.checks.map(\.passed) == [true, false])
        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(JUnitStructure.check(xml).problems == [])
        #expect(xml.contains("<testsuite name=\"regression\""))
    }
}

/// Collects log lines from a `@Sendable` logger.
final class MessageLog: Sendable {
    private let storage = Mutex<[String]>([])
    var lines: [String] { storage.withLock { $0 } }
    func append(_ line: String) { storage.withLock { $0.append(line) } }
}
