import Foundation
import OptoLink
import OptoLinkTestSupport
import Synchronization
import Testing

@testable import OptoLinkSoak
import SoakRecords
import SoakVerdicts

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A test backend in the same process: every request touches the virtual clock (so it never
/// advances under a request being handled) and gets `reply`.
struct VirtualBackend: OptoLinkTransport {
    let clock: SteppingClock
    let reply: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse

    func send(_ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse {
        clock.touch()
        defer { clock.touch() }
        return try await reply(request, context)
    }

    static func ok(_ context: OptoLinkRequestContext) -> OptoLinkHTTPResponse {
        switch context.endpoint {
        case .match: OptoLinkHTTPResponse(status: 201, body: Data(#"{"matched":false,"matchMethod":"NONE"}"#.utf8))
        default: OptoLinkHTTPResponse(status: 200, body: Data(#"{"ok":true}"#.utf8))
        }
    }

    static func rateLimited(_ seconds: Int) -> OptoLinkHTTPResponse {
        OptoLinkHTTPResponse(
            status: 429,
            body: Data(#"{"statusCode":429,"message":"Rate limit exceeded. Retry after \#(seconds) seconds."}"#.utf8))
    }

    /// Suspends until cancelled (a backend that never answers), as `URLSession` does.
    static func silent() async throws -> OptoLinkHTTPResponse {
        try? await Task.sleep(for: .seconds(1_000_000))
        throw URLError(.cancelled)
    }
}

/// One run of the real driver, journey runner, recorder and SDK instances in virtual time,
/// against an in-process backend.
final class VirtualDriverRun: Sendable {
    let clock = SteppingClock()
    let control = RunControl()
    let directory: URL
    let recorder: SoakRecorder
    let driver: SoakDriver

    init(
        profile json: String,
        reply: @escaping @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
    ) throws {
        let profile = try SoakProfile.decode(Data(json.utf8))
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("driver-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let timeline = RunTimeline(clock: clock)
        recorder = try SoakRecorder(directory: directory, timeline: timeline, control: control)
        let runner = JourneyRunner(
            recorder: recorder, timeline: timeline, transport: VirtualBackend(clock: clock, reply: reply),
            session: URLSession(configuration: .ephemeral), clock: clock, control: control,
            baseURL: URL(string: "http://127.0.0.1:9")!, sdk: profile.sdk, runId: "vt", linkIds: [:])
        driver = SoakDriver(
            profile: profile, devices: VirtualDevice.population(profile.devices, seed: profile.seed), runner: runner,
            control: control)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// Runs the driver while the clock advances; returns the stop reason and the run's end (run seconds).
    func run() async -> (reason: StopReason, end: Double) {
        let driving = Task { await clock.drive() }
        let reason = await driver.run()
        let end = clock.seconds
        driving.cancel()
        recorder.finish()
        return (reason, end)
    }

    func attempts() throws -> [AttemptRecord] {
        try ReportCSVReader.attempts(directory.appendingPathComponent("attempts.csv"))
    }

    func calls() throws -> [CallRecord] {
        try ReportCSVReader.calls(directory.appendingPathComponent("calls.csv"))
    }

    var summary: SoakSummary.JourneySummary { recorder.summaryParts(activeSeconds: clock.seconds).journeys }

    var metrics: [String: Double] {
        let parts = recorder.summaryParts(activeSeconds: clock.seconds)
        return SummaryMetrics.build(
            SoakSummary(
                run: .init(
                    runId: "vt", profile: "vt", profilePath: nil, soakVersion: "t", startedAt: "", startEpoch: 0,
                    durationSeconds: clock.seconds, interrupted: false, stopReason: .completed, backend: "t",
                    baseURL: "",
                    loadModel: "open", devices: 1, seed: 1),
                journeys: parts.journeys, endpoints: parts.endpoints, totals: parts.totals,
                deferredMatch: parts.deferred, clicks: parts.clicks, opens: parts.opens, rss: [], server: nil,
                metrics: [:], verdicts: nil, thresholds: []))
    }
}

/// Profiles of the deadline tests: `devices` devices, one journey of `steps`.
func deadlineProfile(devices: Int = 1, steps: String, load: String, sdk: String = #"{"maxRetries": 2}"#) -> String {
    """
    {"name": "deadline", "seed": 4, "devices": {"count": \(devices)},
     "journeys": [{"name": "j", "steps": [\(steps)]}],
     "load": \(load), "sdk": \(sdk)}
    """
}

/// The hard stop, in virtual time: exact numbers. A run lasts at most `duration + grace`
/// whatever the backend does; no step starts after `duration`, no attempt after the cutoff;
/// everything cut is counted as such and kept out of latencies.
@Suite(.timeLimit(.minutes(1)))
struct DriverDeadlineTests {
    static let epsilon = 1e-6

    @Test(
        "429 'Retry after N seconds' on every /match, duration 1, grace 3, maxRetries 2: the run ends at 4 s, the journey is unfinished, the call cancelled",
        arguments: [20, 60])
    func rateLimitedMatchIsCutAtTheCutoff(retryAfter: Int) async throws {
        let run = try VirtualDriverRun(
            profile: deadlineProfile(
                steps: #"{"kind": "firstLaunch"}"#,
                load:
                    #"{"model": "open", "startRate": 1, "stages": [{"duration": 1, "target": 1}], "duration": 1, "grace": 3}"#
            )
        ) { _, context in
            context.endpoint == .match ? VirtualBackend.rateLimited(retryAfter) : VirtualBackend.ok(context)
        }
        let (reason, end) = await run.run()
        #expect(reason == .deadline)
        #expect(abs(end - 4) < Self.epsilon, "the run ended at \(end) s")
        let attempts = try run.attempts()
        #expect(attempts.map(\.endpoint) == [.match], "only the first /match; its retry at \(retryAfter) s is cut")
        #expect(attempts.allSatisfy { $0.actualStart < 4 })
        let calls = try run.calls()
        #expect(calls.count == 1)
        #expect(calls.first?.outcome == .cancelledByRun)
        #expect(abs((calls.first?.end ?? 0) - 4) < Self.epsilon, "a cut call ends when it is cut")
        #expect(run.summary.started == 1 && run.summary.unfinished == 1 && run.summary.completed == 0)
        let metrics = run.metrics
        #expect(metrics["journeys.unfinished"] == 1)
        #expect(metrics["match.calls.cancelled_by_run"] == 1)
        #expect(metrics["match.call_latency.p95"] == 0, "a cancelled call has no latency")
        #expect(metrics["http.errors"] == 0)
    }

    @Test("a backend that never answers: duration 2, grace 3 ends at 5 s with the attempt cancelled, not an error")
    func silentBackendIsCutAtTheCutoff() async throws {
        let run = try VirtualDriverRun(
            profile: deadlineProfile(
                devices: 2, steps: #"{"kind": "firstLaunch"}, {"kind": "event", "name": "e"}"#,
                load:
                    #"{"model": "open", "startRate": 1, "stages": [{"duration": 2, "target": 1}], "duration": 2, "grace": 3}"#,
                sdk: #"{"maxRetries": 2, "timeout": 30}"#)
        ) { _, _ in try await VirtualBackend.silent() }
        let (reason, end) = await run.run()
        #expect(reason == .deadline)
        #expect(abs(end - 5) < Self.epsilon, "the run ended at \(end) s")
        let attempts = try run.attempts()
        // the two journeys' /match
        #expect(attempts.count == 2, "\(attempts.map { ($0.endpoint, $0.actualStart, $0.end) })")
        #expect(
            attempts.allSatisfy { $0.errorKind == .cancelledByRun && $0.actualStart < 5 && $0.end <= 5 + Self.epsilon })
        #expect(run.summary.unfinished == 2)
        #expect(run.metrics["http.errors"] == 0)
        #expect(run.metrics["match.calls.cancelled_by_run"] == 2)
    }

    @Test(
        "/match answering after 1.5 s with duration 2: no event step starts at or after 2 s; cut journeys are unfinished"
    )
    func noStepStartsAfterTheDuration() async throws {
        let clockBox = Mutex<SteppingClock?>(nil)
        let run = try VirtualDriverRun(
            profile: deadlineProfile(
                devices: 10, steps: #"{"kind": "firstLaunch"}, {"kind": "event", "name": "e"}"#,
                load:
                    #"{"model": "open", "startRate": 5, "stages": [{"duration": 2, "target": 5}], "duration": 2, "grace": 5}"#
            )
        ) { _, context in
            if context.endpoint == .match, let clock = clockBox.withLock({ $0 }) {
                try await clock.sleep(for: .milliseconds(1500))
            }
            return VirtualBackend.ok(context)
        }
        clockBox.withLock { $0 = run.clock }
        let (reason, end) = await run.run()
        #expect(reason == .duration)
        let attempts = try run.attempts()
        let events = attempts.filter { $0.endpoint == .events }
        #expect(events.allSatisfy { $0.actualStart < 2 }, "\(events.map(\.actualStart))")
        // Arrivals at 0.1, 0.3, …, 1.9 s; a journey gets to its event only when its /match (and
        // the 50 ms wait for the deferred link) ended before 2 s: the first two, unless the
        // machine was too loaded to start them on time. Every other journey is unfinished.
        let matches = attempts.filter { $0.endpoint == .match }
        let inTime = matches.filter { $0.end + 0.05 < 2 }.map(\.device)
        #expect(Set(events.map(\.device)) == Set(inTime))
        #expect(events.count <= 2 && !events.isEmpty)
        #expect(run.summary.completed == events.count)
        #expect(run.summary.unfinished == run.summary.started - events.count)
        #expect(matches.count <= run.summary.started && matches.count >= 8)
        #expect(end < run.control.cutoff, "in-flight launches finished within the grace (\(end) s)")
    }

    @Test(
        "SIGINT at 1 s with grace 1 and calls that never answer: the run ends at 2 s; stopReason says the deadline cut them"
    )
    func interruptThenDeadline() async throws {
        let run = try VirtualDriverRun(
            profile: Self.relaunchAndFiveEvents(grace: 1)
        ) { _, context in
            if context.endpoint == .events { return try await VirtualBackend.silent() }
            return VirtualBackend.ok(context)
        }
        let control = run.control
        let clock = run.clock
        let interrupter = Task {
            try await clock.sleep(for: .seconds(1))
            control.stop(.interrupted)
        }
        let (reason, end) = await run.run()
        _ = try await interrupter.value
        #expect(control.stopReason == .interrupted)
        #expect(reason == .deadline, "in-flight calls were cancelled at the deadline")
        #expect(abs(control.cutoff - control.windowEnd - 1) < Self.epsilon && control.windowEnd >= 1)
        #expect(
            abs(end - control.cutoff) < Self.epsilon, "the run ended at \(end) s, the cutoff was \(control.cutoff) s")
        let calls = try run.calls().filter { $0.endpoint == .events }
        #expect(calls.count == 3)
        #expect(calls.allSatisfy { $0.outcome == .cancelledByRun })
        #expect(try run.attempts().allSatisfy { $0.actualStart < control.cutoff })
        #expect(run.summary.unfinished == 3)
    }

    /// 3 devices in a closed loop for 60 s, each a relaunch then 5 events; 2 retries, 30 s timeout.
    static func relaunchAndFiveEvents(grace: Int) -> String {
        deadlineProfile(
            devices: 3, steps: #"{"kind": "relaunch"}, {"kind": "event", "name": "e", "repeat": 5}"#,
            load: #"{"model": "closed", "concurrency": 3, "duration": 60, "grace": \#(grace)}"#,
            sdk: #"{"maxRetries": 2, "timeout": 30}"#)
    }

    @Test(
        "a second stop signal ends a 60 s grace at once: requests in flight and Retry-After sleeps are cut then",
        arguments: [false, true])
    func secondSignalEndsTheGrace(backingOff: Bool) async throws {
        let run = try VirtualDriverRun(
            profile: Self.relaunchAndFiveEvents(grace: 60)
        ) { _, context in
            guard context.endpoint == .events else { return VirtualBackend.ok(context) }
            if backingOff { return VirtualBackend.rateLimited(50) }
            return try await VirtualBackend.silent()
        }
        let control = run.control
        let clock = run.clock
        let requests = StopRequests()
        let interrupter = Task {
            try await clock.sleep(for: .seconds(1))
            _ = requests.record("SIGINT", stopping: control, for: .interrupted)
            try await clock.sleep(for: .seconds(2))
            _ = requests.record("SIGINT", stopping: control, for: .interrupted)
        }
        let (reason, end) = await run.run()
        _ = try await interrupter.value
        #expect(control.stopReason == .interrupted)
        #expect(reason == .deadline, "in-flight calls were cut")
        #expect(abs(control.cutoff - 1) < Self.epsilon, "the cutoff is the first stop, not the stop + 60 s")
        #expect(end < 3.5, "the run ended at \(end) s, soon after the second signal at 3 s")
        let calls = try run.calls().filter { $0.endpoint == .events }
        #expect(calls.count == 3)
        #expect(calls.allSatisfy { $0.outcome == .cancelledByRun })
    }

    @Test("SIGINT with grace 1 and calls that answer within it: stopReason is interrupted and nothing is cut")
    func interruptWithinGrace() async throws {
        let clockBox = Mutex<SteppingClock?>(nil)
        let run = try VirtualDriverRun(
            profile: deadlineProfile(
                devices: 3, steps: #"{"kind": "relaunch"}, {"kind": "event", "name": "e", "repeat": 50}"#,
                load: #"{"model": "closed", "concurrency": 3, "duration": 60, "grace": 1}"#)
        ) { _, context in
            if context.endpoint == .events, let clock = clockBox.withLock({ $0 }) {
                try await clock.sleep(for: .milliseconds(300))
            }
            return VirtualBackend.ok(context)
        }
        clockBox.withLock { $0 = run.clock }
        let control = run.control
        let clock = run.clock
        let interrupter = Task {
            try await clock.sleep(for: .milliseconds(1100))
            control.stop(.interrupted)
        }
        let (reason, end) = await run.run()
        _ = try await interrupter.value
        #expect(reason == .interrupted)
        #expect(end < control.cutoff, "in-flight calls ended within the grace (\(end) s)")
        let calls = try run.calls()
        #expect(calls.allSatisfy { $0.outcome == .ok })
        #expect(try run.attempts().allSatisfy { $0.actualStart <= control.windowEnd + Self.epsilon })
        #expect(run.summary.unfinished == 3, "every journey was stopped before its 50th event")
    }

    @Test("a fire-and-forget /sdk/session the run cancels at its end is counted as cancelled, never as an HTTP error")
    func sessionCancelledByTheRunIsNotAnError() async throws {
        let run = try VirtualDriverRun(
            profile: deadlineProfile(
                steps: #"{"kind": "firstLaunch"}"#,
                load:
                    #"{"model": "open", "startRate": 1, "stages": [{"duration": 1, "target": 1}], "duration": 1, "grace": 2}"#,
                sdk: #"{"maxRetries": 2, "timeout": 30}"#)
        ) { _, context in
            if context.endpoint == .session { return try await VirtualBackend.silent() }
            return VirtualBackend.ok(context)
        }
        let (reason, end) = await run.run()
        #expect(reason == .deadline)
        #expect(abs(end - 3) < Self.epsilon)
        let session = try #require(try run.calls().first { $0.endpoint == .session })
        #expect(session.outcome == .cancelledByRun)
        #expect(run.summary.completed == 1, "the journey's own steps all finished")
        let metrics = run.metrics
        #expect(metrics["http.errors"] == 0)
        #expect(metrics["session.errors"] == 0)
        #expect(metrics["session.calls.cancelled_by_run"] == 1)
    }

    @Test("an event call cut in a 429 back-off (N = 20) keeps its real elapsed time and stays out of call latency")
    func eventCutInBackOff() async throws {
        let run = try VirtualDriverRun(
            profile: deadlineProfile(
                steps: #"{"kind": "relaunch"}, {"kind": "event", "name": "e"}"#,
                load:
                    #"{"model": "open", "startRate": 1, "stages": [{"duration": 1, "target": 1}], "duration": 1, "grace": 3}"#
            )
        ) { _, context in
            context.endpoint == .events ? VirtualBackend.rateLimited(20) : VirtualBackend.ok(context)
        }
        let (reason, end) = await run.run()
        #expect(reason == .deadline)
        #expect(abs(end - 4) < Self.epsilon)
        let event = try #require(try run.calls().first { $0.endpoint == .events })
        #expect(event.outcome == .cancelledByRun)
        #expect(event.end - event.intendedStart > 3, "cut after more than 3 s in back-off, not a 1 ms call")
        let metrics = run.metrics
        #expect(metrics["events.call_latency.max"] == 0)
        #expect(metrics["events.calls.cancelled_by_run"] == 1)
        #expect(metrics["events.429"] == 1)
        #expect(run.summary.unfinished == 1)
    }
}

/// Journey time from the intended start, against a backend's own log of what it held.
@Suite(.timeLimit(.minutes(2)))
struct JourneyTimeTests {
    @Test(
        "a backend holding every request that arrives in run-seconds 10–12 for 2 s, at 20 journeys/s: the share of journeys ≥ 1 s from their intended start matches the backend's log within 10 %"
    )
    func journeyTimeMatchesTheBackendsLog() async throws {
        let held = Mutex<Set<String>>([])
        let clockBox = Mutex<SteppingClock?>(nil)
        let run = try VirtualDriverRun(
            profile: deadlineProfile(
                devices: 280, steps: #"{"kind": "firstLaunch"}, {"kind": "event", "name": "e", "repeat": 2}"#,
                load:
                    #"{"model": "open", "startRate": 20, "stages": [{"duration": 14, "target": 20}], "duration": 15, "iterations": 280, "grace": 5}"#,
                sdk: #"{"maxRetries": 0, "timeout": 10}"#)
        ) { _, context in
            if let clock = clockBox.withLock({ $0 }), (10..<12).contains(clock.seconds) {
                // The backend's own log: which device had a request held.
                let device = DeviceLaunch(label: context.instanceLabel).device
                held.withLock { _ = $0.insert(device) }
                try await clock.sleep(for: .seconds(2))
            }
            return VirtualBackend.ok(context)
        }
        clockBox.withLock { $0 = run.clock }
        let (reason, _) = await run.run()
        #expect(reason == .iterations)
        let journeys = run.summary
        #expect(journeys.started == 280 && journeys.unfinished == 0)
        let histogram = try #require(run.recorder.state.withLock { $0.consumers.aggregate.journeyDurations["j"] })
        #expect(histogram.count == 280)
        let slow = Double(histogram.count(atLeast: 1.0))
        let share = slow / Double(histogram.count)
        let logged = Double(held.withLock { $0.count }) / 280
        #expect(logged > 0.1, "the hold caught \(logged * 100) % of the journeys")
        #expect(abs(share - logged) <= 0.1 * logged, "journeys ≥ 1 s: \(share * 100) %; backend log: \(logged * 100) %")
        // The metric a threshold reads.
        let metrics = run.metrics
        #expect((metrics["journey.j.duration.p95"] ?? 0) >= 2, "p95 includes the 2 s hold")
        #expect(metrics["journey.j.completed"] == 280)
    }
}

/// The per-interval timeline of `summary.json`.
@Suite
struct TimelineRowsTests {
    @Test("every second from 0 to the end gets a row, idle ones included: 26 rows for 26 s, 31 for 30.2 s")
    func everySecondHasARow() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("timeline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock()
        let recorder = try SoakRecorder(directory: directory, timeline: RunTimeline(clock: clock))
        clock.advance(by: .milliseconds(500))
        recorder.journeyStarted(name: "j", lag: 0)
        clock.advance(by: .seconds(25))
        recorder.journeyStarted(name: "j", lag: 0)
        let rows = recorder.intervalSummary(activeSeconds: 26)
        #expect(rows.map(\.t) == (0..<26).map(Double.init))
        #expect(rows.map(\.journeys) == [1] + Array(repeating: 0, count: 24) + [1])
        // A run whose last seconds are idle still covers them.
        #expect(recorder.intervalSummary(activeSeconds: 30.2).count == 31)
        recorder.finish()
    }
}
