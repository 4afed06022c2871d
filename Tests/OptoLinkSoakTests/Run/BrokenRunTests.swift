import Foundation
import OptoLink
import OptoLinkStaging
import Testing

import OptoLinkSoak
import SoakSupport
import SoakRecords
import SoakTestSupport

/// A backend reached under a wrong path: the embedded emulator behind `/nope`.
private struct WrongPathBackend: SoakBackend {
    let inner: EmbeddedBackend
    var baseURL: URL { inner.baseURL.appendingPathComponent("nope") }
    var kind: String { "remote" }
    func ledger() async throws -> [LedgerRow]? { nil }
    func counters() async -> JSONValue? { nil }
    func stop() async { await inner.stop() }
}

/// Runs that must not look green (issue 9, faults 2, 3 and 6): each exits non-zero with a
/// sentence that says why.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct BrokenRunTests {
    static let steps = #"{"kind": "firstLaunch"}, {"kind": "event", "name": "e", "repeat": 3}, {"kind": "identify"}"#
    static let thresholds = #"["http.errors.rate < 0.01", "journeys.unfinished == 0", "backoff.early == 0"]"#

    /// 30 devices; a 30 s schedule, so a run that ends well before it stopped early.
    static func profile(apiKey: String? = nil, rate: Double = 10) -> String {
        let load =
            #"{"model": "open", "startRate": \#(rate), "stages": [{"duration": 30, "target": \#(rate)}], "grace": 5}"#
        var text = e2eProfile(devices: 30, rate: rate, steps: steps, thresholds: thresholds, load: load)
        if let apiKey {
            text = text.replacingOccurrences(
                of: #""sdk": {"timeout": 3}"#, with: #""sdk": {"timeout": 3, "apiKey": "\#(apiKey)"}"#)
        }
        return text
    }

    @Test(
        "a wrong key stops the run early with exit 2, naming the status and the endpoint",
        arguments: [
            ("opl_srv_test_acme_server", "403", "not CLIENT"), ("opl_sdk_test_acme_revoked", "401", "revoked"),
            ("opl_sdk_no_such_key_at_all", "401", "wrong"),
        ])
    func wrongKey(key: String, status: String, hint: String) async throws {
        let run = try EndToEndRun(profile: Self.profile(apiKey: key))
        let result = await run.makeRun().execute()
        #expect(result.exitCode == 2)
        let error = try #require(result.error)
        #expect(error.contains("\(status)×"), "\(error)")
        #expect(error.contains("events") || error.contains("session") || error.contains("identity"), "\(error)")
        #expect(error.contains(hint), "\(error)")
        #expect(result.summary?.run.stopReason == .misconfigured)
        #expect((result.summary?.run.durationSeconds ?? 99) < 20, "not stopped early")
        // The report is still written, and its first lines say why.
        let text = try String(contentsOf: run.reportDirectory.appendingPathComponent("summary.txt"), encoding: .utf8)
        #expect(text.split(separator: "\n").prefix(4).contains { $0.hasPrefix("STOPPED EARLY (misconfigured)") })
        #expect(result.summary?.result == .invalid)
        #expect(text.hasPrefix("result: invalid (exit 2), the run cannot be judged: stopped early"), "\(text)")
    }

    @Test("a wrong base path (every call 404) stops the run early with exit 2")
    func wrongPath() async throws {
        let e2e = try EndToEndRun(profile: Self.profile())
        var run = e2e.makeRun()
        run.makeBackend = { profile, _ in WrongPathBackend(inner: try await EmbeddedBackend.start(profile)) }
        let result = await run.execute()
        #expect(result.exitCode == 2)
        let error = try #require(result.error)
        #expect(error.contains("404×"), "\(error)")
        #expect(error.contains("--base-url"), "\(error)")
    }

    @Test("a run that starts no journey fails with a sentence, and its thresholds are not exercised")
    func emptyRun() async throws {
        let load = #"{"model": "open", "startRate": 0, "stages": [{"duration": 1, "target": 0}], "grace": 1}"#
        let run = try EndToEndRun(
            profile: e2eProfile(devices: 5, rate: 1, steps: Self.steps, thresholds: Self.thresholds, load: load))
        let result = await run.makeRun().execute()
        #expect(result.exitCode == 1)
        let summary = try #require(result.summary)
        let first = try #require(summary.thresholds.first)
        #expect(!first.passed && first.line.contains("the run started no journey"))
        let errors = try #require(summary.thresholds.first { $0.expression == "http.errors.rate < 0.01" })
        #expect(!errors.passed && errors.notExercised == "no HTTP attempt was made")
        #expect(summary.thresholds.filter(\.passed).isEmpty)
    }

    @Test("an abortOnFail threshold stops the run when it fails, with exit 1 and the reason")
    func abortOnFail() async throws {
        // Every event is refused by the emulator's events limit of 1 per minute → 429s; the
        // threshold on 429s aborts the run long before its 30 s schedule ends.
        let load = #"{"model": "open", "startRate": 5, "stages": [{"duration": 30, "target": 5}], "grace": 2}"#
        var text = e2eProfile(
            devices: 200, rate: 5, steps: Self.steps,
            thresholds: #"[{"threshold": "http.429 < 5", "abortOnFail": true, "delayAbortEval": "500ms"}]"#, load: load)
        text = text.replacingOccurrences(
            of: #""events": {"limit": 100000, "windowSeconds": 60}"#,
            with: #""events": {"limit": 1, "windowSeconds": 60}"#)
        let run = try EndToEndRun(profile: text)
        // In virtual time: the clients' 60 s Retry-After waits are cut by the abort, not waited out.
        let clock = SteppingClock()
        let result = await run.makeVirtualRun(on: clock).execute(driving: clock)
        #expect(result.exitCode == 1)
        let summary = try #require(result.summary)
        #expect(summary.run.stopReason == .thresholdAborted)
        #expect(summary.thresholds.first?.message?.contains("\"http.429 < 5\" (abortOnFail) failed") == true)
        // Five 429s take at least a second of arrivals at 5/s; the abort waits 0.5 s more, then the
        // in-flight calls get the 2 s grace: the run ends long before its 30 s schedule.
        #expect(summary.run.durationSeconds < 10, "\(summary.run.durationSeconds)")
    }

    @Test("a report file lost during the run fails the run with exit 2 and a message")
    func reportIOFailure() async throws {
        let e2e = try EndToEndRun(
            profile: e2eProfile(devices: 30, rate: 10, steps: Self.steps, thresholds: Self.thresholds))
        async let result = e2e.makeRun().execute()
        // Wait for the streamed CSVs, then pull the directory from under the writers.
        let partial = e2e.reportDirectory.appendingPathComponent("attempts.csv.partial")
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: partial.path) {
            try await Task.sleep(for: .milliseconds(50))
        }
        try FileManager.default.removeItem(at: e2e.reportDirectory)
        try FileManager.default.createDirectory(at: e2e.reportDirectory, withIntermediateDirectories: true)
        let finished = await result
        #expect(finished.exitCode == 2)
        #expect(finished.error?.contains("the report is incomplete") == true, "\(finished.error ?? "")")
    }

    @Test("every shipped profile gates on http.failed")
    func shippedProfilesGateOnFailed() throws {
        let root = ShippedProfiles.directory
        var files: [URL] = []
        for folder in [root, root.appendingPathComponent("verdicts")] {
            files += try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "json" }
        }
        #expect(files.count >= 6)
        for file in files {
            let profile = try SoakProfile.load(contentsOf: file)
            #expect(
                profile.expect.thresholds.contains { $0.expression.hasPrefix("http.failed") && $0.abortOnFail },
                "\(file.lastPathComponent)")
        }
    }
}

@Suite struct ReportIOTests {
    @Test("a malformed row fails the read, naming the file and the row")
    func malformedRow() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("calls-\(UUID().uuidString).csv")
        defer { try? FileManager.default.removeItem(at: url) }
        let good = Fixture.callRecord(.events, corr: "r:d:1").csvFields
        var bad = good
        bad[4] = "many"
        try Data((CSV.row(CallRecord.csvHeader) + CSV.row(good) + CSV.row(bad)).utf8).write(to: url)
        #expect(throws: ReportIOError.self) { try ReportCSVReader.calls(url) }
        do {
            _ = try ReportCSVReader.calls(url)
        } catch let error as ReportIOError {
            #expect(error.description.contains("row 3 is malformed"))
            #expect(error.path == url.path)
        }
        var unknownOutcome = good
        unknownOutcome[10] = "exploded"
        try Data((CSV.row(CallRecord.csvHeader) + CSV.row(unknownOutcome)).utf8).write(to: url)
        #expect(throws: ReportIOError.self) { try ReportCSVReader.calls(url) }
    }

    @Test("the writer reports a file it could not put in place")
    func writerFailure() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("csv-\(UUID().uuidString)")
        let writer = try CSVStreamWriter(url: directory.appendingPathComponent("a.csv"), header: ["x"])
        writer.append(["1"])
        try FileManager.default.removeItem(at: directory)
        writer.close()
        #expect(writer.failure != nil)
    }
}

@Suite struct RunMonitorTests {
    @Test("an endpoint refused in every response is named; one accepted answer clears it")
    func misconfiguration() throws {
        let monitor = RunMonitor(thresholds: [])
        // /match needs no key: its 201s must not hide that every events call is refused.
        let message = try #require(
            monitor.misconfiguration(now: 0.5, statuses: [.match: ["201": 12], .events: ["401": 10, "403": 2]]))
        #expect(message.contains("events got only 401×10 403×2"))
        #expect(!message.contains("match"))
        let cleared = RunMonitor(thresholds: [])
        #expect(cleared.misconfiguration(now: 0.5, statuses: [.events: ["401": 3, "200": 1]]) == nil)
        #expect(cleared.misconfiguration(now: 3, statuses: [.events: ["401": 30, "200": 1]]) == nil)
        let few = RunMonitor(thresholds: [])
        #expect(few.misconfiguration(now: 0.5, statuses: [.match: ["404": 3]]) == nil)
        #expect(
            few.misconfiguration(now: 2.5, statuses: [.match: ["404": 3]])?.contains("match got only 404×3") == true)
        // Events answer 404 legitimately (a device whose session check-in failed): never a refusal.
        let legit = RunMonitor(thresholds: [])
        #expect(legit.misconfiguration(now: 3, statuses: [.events: ["404": 40], .identity: ["404": 12]]) == nil)
        #expect(RunMonitor(thresholds: []).misconfiguration(now: 11, statuses: [.events: ["401": 99]]) == nil)
    }
}
