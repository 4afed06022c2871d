import Foundation
import OptoLink
import Testing

import OptoLinkSoak
import SoakRecords
import SoakVerdicts
import SoakTestSupport

@Suite("End to end against the embedded emulator", .serialized, .timeLimit(.minutes(1)))
struct EndToEndTests {
    @Test("N first launches make N first /match attempts, relaunches none; CSV rows equal the emulator's counters")
    func firstLaunchAndCounters() async throws {
        let devices = 24
        let e2e = try EndToEndRun(
            profile: e2eProfile(
                devices: devices, rate: 40,
                steps: """
                    {"kind": "click", "link": "welcome"}, {"kind": "firstLaunch"},
                    {"kind": "event", "name": "open", "repeat": 2}, {"kind": "identify"},
                    {"kind": "open", "link": "promo", "style": "universal"},
                    {"kind": "relaunch"}, {"kind": "event", "name": "again"}, {"kind": "clearIdentity"}
                    """,
                thresholds: #"["http.errors.rate == 0", "journeys.completed == 24"]"#))
        let result = await e2e.makeRun().execute()
        #expect(result.exitCode == 0, "\(e2e.log)")
        #expect(try e2e.summaryJSON()["result"] as? String == "passed")
        let attempts = try e2e.attempts()
        let matches = attempts.filter { $0.endpoint == .match }
        #expect(matches.filter { $0.attempt == 1 }.count == devices)
        #expect(matches.allSatisfy { $0.launch == 1 }, "a relaunch sent /match")
        #expect(Set(matches.map(\.device)).count == devices)
        // Every event carries a correlation id run:device:seq.
        let events = attempts.filter { $0.endpoint == .events }
        #expect(events.count == devices * 3)
        #expect(events.allSatisfy { $0.correlationId?.split(separator: ":").count == 3 })
        // Client rows versus the emulator's own counters, per endpoint.
        let counters = try #require(e2e.server).counters()
        for endpoint in ContractEndpoint.allCases {
            let served = counters.endpoints[endpoint.rawValue]?.values.reduce(0, +) ?? 0
            let probes = endpoint == .data ? 1 : 0  // the pre-run link-id probe for "welcome"
            #expect(attempts.filter { $0.endpoint == endpoint }.count + probes == served, "\(endpoint)")
        }
        #expect(counters.endpoints["click"]?.values.reduce(0, +) == devices)
        // One call row per (device, launch, callId); attempts add up.
        let calls = try e2e.calls()
        #expect(calls.reduce(0) { $0 + $1.attempts } == attempts.count)
        #expect(Set(calls.map(CallKey.init)).count == calls.count)
        // Clipboard survives for every device here, so every click is attributed by CLIPBOARD.
        let summary = try #require(result.summary)
        #expect(summary.deferredMatch.byMethod["CLIPBOARD"] == devices)
        #expect(summary.opens.emitted == devices)
        // The per-interval timeline accounts for every attempt and journey.
        #expect(summary.timeline.reduce(0) { $0 + $1.attempts } == attempts.count)
        #expect(summary.timeline.reduce(0) { $0 + $1.journeys } == summary.journeys.started)
        #expect(zip(summary.timeline, summary.timeline.dropFirst()).allSatisfy { $0.t < $1.t })
    }

    @Test("summary percentiles agree with percentiles computed from attempts.csv within the stated precision")
    func percentilesAgree() async throws {
        let e2e = try EndToEndRun(
            profile: e2eProfile(
                devices: 40, rate: 80,
                steps: #"{"kind": "firstLaunch"}, {"kind": "event", "name": "e", "repeat": 5}"#))
        let result = await e2e.makeRun().execute()
        #expect(result.exitCode == 0, "\(e2e.log)")
        let attempts = try e2e.attempts()
        let summary = try #require(result.summary)
        for endpoint in [ContractEndpoint.match, .session, .events] {
            let latencies = attempts.filter { $0.endpoint == endpoint }.map { $0.end - $0.actualStart }.sorted()
            let histogram = try #require(summary.endpoints[endpoint.rawValue]?.attemptLatency)
            #expect(histogram.count == UInt64(latencies.count))
            for (p, value) in [(50.0, histogram.p50), (90, histogram.p90), (99, histogram.p99), (99.9, histogram.p999)]
            {
                let exact = Fixture.exactPercentile(latencies, p)
                // Histogram precision, plus 2 µs for the CSV's microsecond rounding of start and end.
                #expect(abs(value - exact) <= exact * LatencyHistogram.relativePrecision + 2e-6, "\(endpoint) p\(p)")
            }
        }
    }

    /// More closed-model workers than one nested group holds (600 over groups of 256): every
    /// worker runs, the budget is spent exactly, and every device took part.
    @Test func closedModelWorkersInSeveralGroupsAllRun() async throws {
        #expect(SoakDriver.workersPerGroup < 600)
        let e2e = try EndToEndRun(
            profile: e2eProfile(
                devices: 600, rate: 1, steps: #"{"kind": "relaunch"}, {"kind": "event", "name": "tick"}"#,
                load: #"{"model": "closed", "concurrency": 600, "iterations": 1200, "duration": 60, "grace": 5}"#))
        let result = await e2e.makeRun().execute()
        #expect(result.exitCode == 0, "\(e2e.log)")
        let summary = try #require(result.summary)
        #expect(summary.journeys.started == 1200 && summary.journeys.completed == 1200)
        let attempts = try e2e.attempts()
        #expect(Set(attempts.map(\.device)).count == 600)
    }

    @Test(
        "an interrupted (SIGINT) or terminated (SIGTERM) run stops new work, still writes a readable report and exits 130 / 143",
        arguments: [(StopReason.interrupted, Int32(130)), (.terminated, Int32(143))])
    func interrupted(reason: StopReason, code: Int32) async throws {
        let e2e = try EndToEndRun(
            profile: e2eProfile(
                devices: 20, rate: 1,
                steps:
                    #"{"kind": "firstLaunch"}, {"kind": "event", "name": "tick"}, {"kind": "wait", "seconds": 0.2}, {"kind": "event", "name": "tock"}"#,
                load: #"{"model": "closed", "concurrency": 10, "duration": 60, "grace": 3}"#))
        let run = e2e.makeRun()
        let control = run.control
        let started = ContinuousClock.now
        async let result = run.execute()
        // The streamed CSV reaches the disk while the run goes on (flushed about once a second),
        // before any stop: a SIGKILL keeps it. Waited for, not timed: a loaded machine starts slowly.
        let partialURL = e2e.reportDirectory.appendingPathComponent("attempts.csv.partial")
        var lines = 0
        for _ in 0..<300 where lines <= 2 {
            try await Task.sleep(for: .milliseconds(100))
            lines = (try? String(contentsOf: partialURL, encoding: .utf8))?.split(separator: "\n").count ?? 0
        }
        #expect(lines > 2, "rows still buffered after 30 s of running")
        let stopAt = ContinuousClock.now
        control.stop(reason)
        let finished = await result
        #expect(finished.exitCode == code)
        #expect(ContinuousClock.now - stopAt < .seconds(10))
        let json = try e2e.summaryJSON()
        let runInfo = try #require(json["run"] as? [String: Any])
        #expect(runInfo["interrupted"] as? Bool == true)
        // One word says how it ended, the same as the exit code; the first line of summary.txt too.
        #expect(json["result"] as? String == reason.rawValue)
        #expect(RunResult(rawValue: reason.rawValue)?.exitCode == code)
        let text = try String(contentsOf: e2e.reportDirectory.appendingPathComponent("summary.txt"), encoding: .utf8)
        #expect(text.hasPrefix("result: \(reason.rawValue) (exit \(code)), SIG"), "\(text.prefix(200))")
        // compare refuses the stopped run as the current side and as the baseline (exit 2, saying why),
        // unless --allow-partial: partial counts are no evidence of "no regression".
        let copy = e2e.directory.appendingPathComponent("copy")
        try FileManager.default.copyItem(at: e2e.reportDirectory, to: copy)
        let refused = MessageLog()
        let options = CompareOptions(baselinePath: copy.path, currentPath: e2e.reportDirectory.path)
        #expect(CompareCommand.run(options, log: refused.append).exitCode == 2)
        let signal = reason == .terminated ? "SIGTERM" : "SIGINT"
        for side in ["baseline", "current"] {
            #expect(
                refused.lines.contains {
                    $0.hasPrefix("error: the \(side) run did not run its course (stopped by \(signal) after ")
                        && $0.contains("--allow-partial")
                }, "\(refused.lines)")
        }
        #expect(!FileManager.default.fileExists(atPath: e2e.reportDirectory.appendingPathComponent("compare").path))
        #expect(await OptoLinkSoak.main(["compare", copy.path, e2e.reportDirectory.path]) == 2)
        #expect(await OptoLinkSoak.main(["compare", "--allow-partial", copy.path, e2e.reportDirectory.path]) == 0)
        let attempts = try e2e.attempts()
        #expect(attempts.count > 10)
        #expect(try e2e.calls().count > 0)
        // Run seconds count from after `started`, so an attempt begun after the stop has a start
        // above the wall-clock seconds from `started` to the stop.
        let stoppedBy = RunTimeline.seconds(stopAt - started) + 0.1
        let late = attempts.filter { $0.actualStart > stoppedBy }
        #expect(late.count < 20, "new work kept starting after the interrupt")
    }

    @Test("a failed threshold exits 1 and is reported with its observed value")
    func thresholdFails() async throws {
        let e2e = try EndToEndRun(
            profile: e2eProfile(
                devices: 5, rate: 20, steps: #"{"kind": "firstLaunch"}"#,
                thresholds: #"["match.attempts < 1", "match.attempts == 5"]"#))
        let result = await e2e.makeRun().execute()
        #expect(result.exitCode == 1)
        let thresholds = try #require(result.summary?.thresholds)
        #expect(thresholds.map(\.passed) == [false, true])
        #expect(thresholds[0].observed == 5)
        #expect(try e2e.summaryJSON()["result"] as? String == "failed")
        let text = try String(contentsOf: e2e.reportDirectory.appendingPathComponent("summary.txt"), encoding: .utf8)
        #expect(text.hasPrefix("result: failed (exit 1), 1 of 2 thresholds failed"), "\(text.prefix(200))")
    }

    @Test("a bad profile exits 2 naming the field and writes nothing")
    func badProfile() async throws {
        let e2e = try EndToEndRun(
            profile: e2eProfile(
                devices: 5, rate: 20, steps: #"{"kind": "firstLaunch"}, {"kind": "evnet", "name": "x"}"#))
        let result = await e2e.makeRun().execute()
        #expect(result.exitCode == 2)
        #expect(
            result.error?.contains("journeys[0].steps[1].kind: unknown step \"evnet\"") == true, "\(result.error ?? "")"
        )
        #expect(!FileManager.default.fileExists(atPath: e2e.reportDirectory.path))
    }

    /// A run against `baseURL`, where nothing listens; returns it and what it logged.
    private func runUnreachable(_ baseURL: String) async throws -> (SoakRunResult, [String]) {
        let e2e = try EndToEndRun(profile: e2eProfile(devices: 2, rate: 20, steps: #"{"kind": "firstLaunch"}"#))
        var run = e2e.makeRun { $0.baseURL = URL(string: baseURL) }
        run.makeBackend = { _, options in RemoteBackend(baseURL: options.baseURL!, ledgerFile: nil) }
        let result = await run.execute()
        #expect(result.exitCode == 2)
        #expect(result.error?.hasPrefix("unreachable backend") == true)
        return (result, e2e.log)
    }

    @Test("an unreachable backend exits 2")
    func unreachable() async throws {
        _ = try await runUnreachable("http://127.0.0.1:1")
    }

    #if os(Linux)
        @Test("an unreachable https:// backend is probed on the native transport and exits 2 with the cause")
        func unreachableHTTPSOnTheNativeTransport() async throws {
            let (result, log) = try await runUnreachable("https://127.0.0.1:1")
            #expect(result.error?.contains("connection refused") == true, "\(result.error ?? "")")
            #expect(!log.contains { $0.contains("URLSession") }, "\(log)")
        }
    #else
        @Test("an unreachable https:// backend: the transport note comes before the error, not instead of it")
        func unreachableHTTPSSaysWhichTransportFirst() async throws {
            let (_, log) = try await runUnreachable("https://127.0.0.1:1")
            let note = log.firstIndex { $0.contains("https") && $0.contains("URLSession") }
            let error = log.firstIndex { $0.contains("unreachable backend") }
            #expect(note != nil, "\(log)")
            #expect(error != nil, "\(log)")
            if let note, let error { #expect(note < error, "\(log)") }
        }
    #endif
}
