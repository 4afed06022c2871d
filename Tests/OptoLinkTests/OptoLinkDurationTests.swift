import Foundation
import OptoLink
import OptoLinkTestSupport
import Testing

/// The SDK's own time unit (it exists on iOS 15, where `Duration` does not): exact conversions,
/// saturating arithmetic (a 429's absurd `N` cannot trap), and `Duration`'s spelling in logs.
struct OptoLinkDurationTests {
    @Test func unitsConvertExactly() {
        #expect(OptoLinkDuration.seconds(2).nanoseconds == 2_000_000_000)
        #expect(OptoLinkDuration.milliseconds(500).nanoseconds == 500_000_000)
        #expect(OptoLinkDuration.seconds(0.25) == .milliseconds(250))
        #expect(OptoLinkDuration.seconds(1.5).seconds == 1.5)
        #expect(OptoLinkDuration(Duration.milliseconds(2500)) == .milliseconds(2500))
        #expect(OptoLinkDuration.milliseconds(2500).duration == .milliseconds(2500))
    }

    @Test func arithmeticSaturatesInsteadOfTrapping() {
        #expect(OptoLinkDuration.seconds(Int64.max).nanoseconds == .max)
        #expect(OptoLinkDuration.seconds(Int.min).nanoseconds == .min)
        #expect(OptoLinkDuration.seconds(Double.infinity).nanoseconds == .max)
        #expect(OptoLinkDuration.seconds(Double.nan) == .zero)
        #expect((OptoLinkDuration(nanoseconds: .max) + .seconds(1)).nanoseconds == .max)
        #expect((OptoLinkDuration(nanoseconds: .min) - .seconds(1)).nanoseconds == .min)
        #expect(OptoLinkInstant(nanoseconds: .max).advanced(by: .seconds(1)).nanoseconds == .max)
    }

    @Test func itPrintsAsDurationDoes() {
        #expect(OptoLinkDuration.seconds(1).description == Duration.seconds(1).description)
        #expect(OptoLinkDuration.milliseconds(500).description == Duration.milliseconds(500).description)
    }

    @Test func instantsMeasureTheTimeBetweenThem() {
        let start = OptoLinkInstant(nanoseconds: 1_000)
        #expect(start.duration(to: start.advanced(by: .milliseconds(3))) == .milliseconds(3))
        #expect(start.advanced(by: .seconds(1)) > start)
    }

    /// A Swift clock wrapped as the SDK's clock counts from its `now` at wrapping and sleeps on it.
    @Test func aSwiftClockWrappedCountsFromItsNowAndSleepsOnIt() async throws {
        let manual = ManualClock()
        manual.advance(by: .seconds(7))
        let clock = OptoLinkSwiftClock(manual)
        #expect(clock.instant == OptoLinkInstant(nanoseconds: 0))
        let sleeper = Task { try await clock.sleep(for: .seconds(2)) }
        await manual.waitForSleep(.seconds(2))
        manual.advance(by: .seconds(2))
        try await sleeper.value
        #expect(clock.instant == OptoLinkInstant(nanoseconds: 2_000_000_000))
    }
}
