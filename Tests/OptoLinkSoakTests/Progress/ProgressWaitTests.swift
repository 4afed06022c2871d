import Foundation
import OptoLink
import OptoLinkSoak
import OptoLinkTestSupport
import SoakRecords
import Testing

@Suite("Progress line: calls waiting out a Retry-After", .timeLimit(.minutes(1)))
struct ProgressWaitTests {
    static func attempt(
        _ recorder: SoakRecorder, call: UInt64, attempt: Int, status: Int, body: String = "{}"
    ) async throws {
        let request = OptoLinkHTTPRequest(
            method: "POST", url: URL(string: "http://127.0.0.1:1/sdk/events")!, headers: [:], body: Data("{}".utf8))
        let context = OptoLinkRequestContext(
            endpoint: .events, callId: call, attempt: attempt, instanceLabel: "d000001#1", timeout: .seconds(10))
        _ = try await recorder.intercept(request, context: context) { _, _ in
            OptoLinkHTTPResponse(status: status, body: Data(body.utf8))
        }
    }

    /// The counters once the recorder has applied `requests` attempts (they are read off the request's thread).
    static func counters(_ recorder: SoakRecorder, requests: Int, at now: Double) async -> ProgressCounters {
        var polls = 0
        while recorder.progressCounters(at: now).requests < requests && polls < 100_000 {
            polls += 1
            await Task.yield()
        }
        return recorder.progressCounters(at: now)
    }

    @Test("a 429's Retry-After N counts its call as waiting until N seconds on the run's clock have passed")
    func waitsFollowTheClock() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wait-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = ManualClock()
        let timeline = RunTimeline(clock: clock, epoch: 0)
        let recorder = try SoakRecorder(directory: directory, timeline: timeline)
        let three = #"{"statusCode":429,"message":"Rate limit exceeded. Retry after 3 seconds."}"#
        let one = #"{"statusCode":429,"message":"Rate limit exceeded. Retry after 1 seconds."}"#
        try await Self.attempt(recorder, call: 7, attempt: 1, status: 429, body: three)
        try await Self.attempt(recorder, call: 9, attempt: 1, status: 429, body: one)
        try await Self.attempt(recorder, call: 11, attempt: 1, status: 200)
        #expect(await Self.counters(recorder, requests: 3, at: timeline.now()).waitingOnRetryAfter == 2)

        clock.advance(by: .milliseconds(1500))
        #expect(await Self.counters(recorder, requests: 3, at: timeline.now()).waitingOnRetryAfter == 1)
        // Call 9 retries and is answered; call 7 is still inside its 3 s.
        try await Self.attempt(recorder, call: 9, attempt: 2, status: 200)
        #expect(await Self.counters(recorder, requests: 4, at: timeline.now()).waitingOnRetryAfter == 1)

        // A second 429 on call 9 starts a new wait from that attempt's end.
        try await Self.attempt(recorder, call: 9, attempt: 3, status: 429, body: three)
        #expect(await Self.counters(recorder, requests: 5, at: timeline.now()).waitingOnRetryAfter == 2)

        // A call closed in its back-off (the run cut it) no longer waits.
        recorder.closeCalls(DeviceLaunch(device: "d000001", launch: 1), callIds: [9], outcome: .cancelledByRun)
        #expect(await Self.counters(recorder, requests: 5, at: timeline.now()).waitingOnRetryAfter == 1)

        clock.advance(by: .milliseconds(1600))
        #expect(await Self.counters(recorder, requests: 5, at: timeline.now()).waitingOnRetryAfter == 0)
        recorder.finish()
    }

    @Test("the line names the calls waiting on 429 and says so instead of 0/s")
    func lineNamesTheWait() {
        var snapshot = ProgressSnapshot(
            elapsed: 120, scheduled: 150, done: 60, inFlight: 90, requests: 1520, requestRate: 0, status429: 38,
            errors: 0, p99: 0.0041, waitingOnRetryAfter: 38)
        #expect(
            snapshot.line
                == "[ 120.0s] journeys 60/150 done · 90 in flight · 38 waiting on 429 · 1520 req "
                + "(all waiting on 429) · 429s 38 · errors 0 · p99 4.1ms")
        snapshot.requestRate = 12
        #expect(snapshot.line.contains("· 38 waiting on 429 · 1520 req (12/s) ·"))
        snapshot.waitingOnRetryAfter = 0
        snapshot.requestRate = 0
        #expect(snapshot.line.contains("· 90 in flight · 1520 req (0/s) ·"))
    }
}
