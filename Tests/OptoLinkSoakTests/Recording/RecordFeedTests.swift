import Foundation
import OptoLink
import OptoLinkTestSupport
import Testing

import OptoLinkSoak
import SoakRecords
import SoakVerdicts
import SoakSupport
import SoakTestSupport

/// The recorder's feed of the live verdict passes: every record reaches them, each feeding
/// thread's in its order, and a reader sees every record consumed before it.
@Suite struct RecordFeedTests {
    /// One retried call of `device`: a 429 asking for 1 s, a 200 one second later, then the call's row. Out of
    /// order (the row before its attempts) the retry-matrix pass would see a call without attempts.
    static func retriedCall(device: String, call: UInt64, at start: Double) -> [RunRecord] {
        let attempts = Fixture.call(
            .events, device: device, call: call, start: start,
            [.init(status: 429, retryAfter: 1, gapAfter: 1), .init(status: 200)])
        var row = Fixture.callRecord(.events, device: device, call: call, attempts: 2)
        row.start = start
        row.end = attempts[1].end
        return attempts.map(RunRecord.attempt) + [.call(row)]
    }

    @Test("records fed from many threads at once all reach the passes, each thread's in its order")
    func concurrentFeedersLoseNothingAndKeepOrder() async {
        let feed = RecordFeed(context: VerdictContext())
        let threads = 8
        let callsPerThread = 400
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<threads {
                group.addTask {
                    for call in 0..<callsPerThread {
                        let records = Self.retriedCall(
                            device: "d\(thread)", call: UInt64(call + 1), at: Double(call) * 3)
                        for record in records { feed.consume(record) }
                    }
                }
            }
        }
        let report = feed.finish()
        #expect(report.retries.calls == threads * callsPerThread)
        #expect(report.retries.violations == 0)
        #expect(report.retries.inconsistentCalls == 0)
        #expect(report.retries.attemptsPerCall["events"]?["2"] == threads * callsPerThread)
        #expect(report.backoff.rateLimited.checked == threads * callsPerThread)
        #expect(feed.consumed == threads * callsPerThread * 3)
    }

    @Test("a reader sees every record consumed before it (notes, verdicts)")
    func readersSeeWhatWasConsumed() {
        let feed = RecordFeed(context: VerdictContext())
        // A session check-in refused with 429 and an event refused with 404 from the same device:
        // the notes explain the 404 by the 429 (so both records must have reached them).
        feed.consume(.attempt(Fixture.attempt(.session, device: "d9", start: 1, status: 429)))
        feed.consume(.attempt(Fixture.attempt(.events, device: "d9", call: 2, start: 2, status: 404)))
        let notes = feed.notes()
        #expect(notes.contains { $0.contains("404") }, "\(notes)")
        #expect(feed.consumed == 2)
    }
}

/// The run's time axis is kept to the microsecond, so every report time is written exactly.
@Suite struct RunTimelineTests {
    @Test("durations round to the nearest microsecond, halves away from zero")
    func microsecondRounding() {
        #expect(RunTimeline.microseconds(.nanoseconds(1_000_000_499)) == 1.0)
        #expect(RunTimeline.microseconds(.nanoseconds(1_000_000_500)) == 1.000001)
        #expect(RunTimeline.microseconds(.nanoseconds(2_499)) == 0.000002)
        #expect(RunTimeline.microseconds(.nanoseconds(-1_500)) == -0.000002)
        #expect(RunTimeline.microseconds(.seconds(3_600) + .nanoseconds(123_456_789)) == 3_600.123457)
    }

    @Test("the real clock's integer path rounds every nanosecond count as the Duration path does")
    func integerPathRoundsLikeDurations() {
        var rng = SeededRandom(seed: 11)
        var samples: [Int64] = [0, 499, 500, 501, -499, -500, -501, 999_999_500, 1_000_000_499, 86_400_000_000_000]
        for _ in 0..<2_000 { samples.append(Int64.random(in: -1_000_000_000_000...4_000_000_000_000_000, using: &rng)) }
        for nanos in samples {
            #expect(
                RunTimeline.microseconds(nanoseconds: nanos) == RunTimeline.microseconds(.nanoseconds(nanos)),
                "\(nanos)")
        }
        #expect(RunTimeline.wholeNanoseconds(.seconds(5) + .nanoseconds(7)) == 5_000_000_007)
        #expect(RunTimeline.wholeNanoseconds(.nanoseconds(1) / 2) == nil)
    }

    @Test("a timeline on ContinuousClock counts from its origin, plus what a late shard has already missed")
    func continuousClockTimeline() async throws {
        let fresh = RunTimeline(clock: ContinuousClock())
        let late = RunTimeline(clock: ContinuousClock(), epoch: 0, alreadyElapsed: 5)
        let first = fresh.now()
        try await Task.sleep(for: .milliseconds(20))
        let second = fresh.now()
        #expect(first >= 0 && second >= first + 0.0199)  // each read is rounded to the microsecond
        // Only lower bounds and a generous upper one: the machine may be loaded.
        #expect(late.now() >= 5.0199 && late.now() < 5 + 600)
        #expect(second < 600)
    }

    @Test("now() on a clock at odd nanoseconds gives times CSV writes with at most six decimals")
    func nowIsWrittenExactly() {
        let clock = ManualClock()
        let timeline = RunTimeline(clock: clock, epoch: 0)
        for step in [1, 333, 499_999, 1_234_567_891, 7] {
            clock.advance(by: .nanoseconds(step))
            let now = timeline.now()
            var bytes: [UInt8] = []
            CSV.appendExactSeconds(now, to: &bytes)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(Double(text) == now, "\(text)")
            #expect((text.split(separator: ".").last?.count ?? 0) <= 6, "\(text)")
        }
    }
}
