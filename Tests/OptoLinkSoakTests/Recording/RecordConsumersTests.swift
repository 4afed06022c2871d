import Foundation
import OptoLink
import OptoLinkTestSupport
import Testing

@testable import OptoLinkSoak
import SoakRecords

/// The recorder's consumers: what each keeps from the one record stream.
@Suite struct RecordConsumersTests {
    static func attempt(_ n: UInt64, status: Int?, error: AttemptErrorKind? = nil, latency: Double) -> AttemptRecord {
        AttemptRecord(
            device: "d000001", launch: 1, callId: n, endpoint: .events, attempt: 1, intendedStart: 1,
            actualStart: 1, end: 1 + latency, status: status, errorKind: error, retryAfterSeconds: nil,
            requestBytes: 10, responseBytes: 10, correlationId: nil)
    }

    @Test("progress: 429s, errors (5xx, no response) and done journeys; a cancelled attempt has no latency")
    func progressTally() {
        var progress = ProgressTally(lateThreshold: 0.01)
        let records: [RecorderRecord] = [
            .attempt(Self.attempt(1, status: 200, latency: 0.010), offContractBody: nil),
            .attempt(Self.attempt(2, status: 429, latency: 0.020), offContractBody: nil),
            .attempt(Self.attempt(3, status: 503, latency: 0.030), offContractBody: nil),
            .attempt(Self.attempt(4, status: nil, error: .timedOut, latency: 0.040), offContractBody: nil),
            .attempt(Self.attempt(5, status: nil, error: .cancelled, latency: 50), offContractBody: nil),
            .journeyStarted(name: "j", at: 1, lag: 0),
            .journeyEnded(name: "j", completed: true, duration: 1),
            .journeyEnded(name: "j", completed: false, duration: 2),
            .click(status: 200, latency: 0.1, clipboardPlaced: false),
        ]
        for record in records { progress.consume(record) }
        let c = progress.counters(at: 0)
        #expect(c.requests == 5 && c.status429 == 1 && c.errors == 2 && c.done == 2)
        // The cancelled attempt's 50 s stays out: the p99 is the slowest finished attempt's.
        #expect(c.p99 > 0.039 && c.p99 < 0.041)
    }

    /// Records journeys, clicks and opens (no attempts) into a fresh recorder on a virtual clock,
    /// 10 ms apart, with or without its writer.
    static func journeyTally(writer: Bool) throws -> RecorderTally {
        let clock = ManualClock()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("consumers-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let recorder = try SoakRecorder(directory: directory, timeline: RunTimeline(clock: clock), interval: 1)
        if writer { try recorder.startWriter(backlogLimit: 50) }
        for i in 0..<300 {
            clock.advance(by: .milliseconds(10))
            recorder.journeyStarted(name: i % 3 == 0 ? "a" : "b", lag: i % 7 == 0 ? 0.5 : 0.001)
            if i % 11 == 0 { recorder.journeyWaitedForDevice() }
            if i % 13 == 0 { recorder.journeyDropped(intended: Double(i) * 0.01) }
            recorder.clickRecorded(status: i % 5 == 0 ? nil : 302, latency: 0.002, clipboardPlaced: i % 2 == 0)
            recorder.openRecorded(
                OpenRecord(start: 0, latency: 0.003, outcome: .resolved, universal: true, routeCache: false))
            recorder.journeyEnded(name: i % 3 == 0 ? "a" : "b", completed: i % 4 != 0, duration: 0.2)
        }
        recorder.finish()
        return recorder.tally()
    }

    @Test("journeys, clicks and opens queued through the writer reach the same tally as recorded inline")
    func journeysThroughTheWriter() throws {
        let inline = try Self.journeyTally(writer: false)
        let written = try Self.journeyTally(writer: true)
        #expect(written == inline)
        #expect(inline.journeysStarted == 300 && inline.journeysCompleted == 225 && inline.journeysUnfinished == 75)
        #expect(inline.lateStarts == 43 && inline.journeysWaitedForDevice == 28 && inline.journeysDropped == 24)
        #expect(inline.clicks == 300 && inline.clicksByStatus["error"] == 60 && inline.clipboardPlaced == 150)
        #expect(inline.opens == 300 && inline.opensEmitted == 300)
        // 10 ms apart on the virtual clock: 100 starts in each of the first three intervals.
        #expect(inline.intervals.map(\.journeys) == [99, 100, 100, 1])
    }
}
