import Foundation
import OptoLinkTestSupport
import Testing

import OptoLinkSoak
import SoakRecords

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Stop signals and probe errors")
struct StopRequestsTests {
    /// A run control armed on a manual clock: `duration` seconds of steps, then `grace`.
    static func armed(duration: Double, grace: Double) -> (RunControl, ManualClock) {
        let clock = ManualClock()
        let control = RunControl()
        control.arm(timeline: RunTimeline(clock: clock, epoch: 0), window: duration, end: duration, grace: grace)
        return (control, clock)
    }

    @Test("the first signal gives in-flight calls the grace period; the second ends it now; a third only says so")
    func secondSignal() {
        let (control, clock) = Self.armed(duration: 60, grace: 15)
        let requests = StopRequests()
        requests.setGrace(15)
        clock.advance(by: .seconds(20))
        let first = requests.record("SIGINT", stopping: control, for: .interrupted)
        #expect(
            first == "SIGINT: stopping new work; in-flight calls end within 15 s, then the report is written "
                + "(SIGINT again: end them now)…")
        #expect(control.stopReason == .interrupted)
        #expect(control.cutoff == 35)
        clock.advance(by: .seconds(5))
        #expect(control.attemptAllowed(at: 25), "the grace period still runs")
        let second = requests.record("SIGINT", stopping: control, for: .interrupted)
        #expect(second == "SIGINT again: ending in-flight calls now; the report is written with what was measured")
        #expect(control.graceEnded)
        #expect(control.cutoff == 20, "the cutoff is the stop itself")
        #expect(control.secondsUntilCutoff == 0)
        #expect(!control.attemptAllowed(at: 25))
        #expect(control.stopReason == .interrupted, "the first reason stays")
        let third = requests.record("SIGTERM", stopping: control, for: .terminated)
        #expect(third == "SIGTERM again: already ending in-flight calls; the report is being written")
        #expect(control.stopReason == .interrupted)
        #expect(requests.count == 3)
    }

    @Test("a second signal in the grace period after the run's end cuts at the end, not later")
    func secondSignalAfterTheEnd() {
        let (control, clock) = Self.armed(duration: 2, grace: 60)
        let requests = StopRequests()
        clock.advance(by: .seconds(5))
        _ = requests.record("SIGTERM", stopping: control, for: .terminated)
        #expect(control.cutoff == 62)
        _ = requests.record("SIGTERM", stopping: control, for: .terminated)
        #expect(control.cutoff == 2)
        #expect(!control.attemptAllowed(at: 5))
    }

    @Test("two signals before the run's clock starts: the run is cut as soon as it is armed")
    func twoSignalsBeforeTheRunStarts() {
        let control = RunControl()
        let requests = StopRequests()
        _ = requests.record("SIGINT", stopping: control, for: .interrupted)
        _ = requests.record("SIGINT", stopping: control, for: .interrupted)
        let clock = ManualClock()
        control.arm(timeline: RunTimeline(clock: clock, epoch: 0), window: 10, end: 10, grace: 30)
        #expect(control.cutoff == 0, "arming does not give back the grace period: the cutoff is the start")
        clock.advance(by: .seconds(1))
        #expect(control.secondsUntilCutoff == 0)
        #expect(!control.attemptAllowed(at: 1))
    }

    @Test(
        "SIGINT in the grace period (duration 2, grace 1, signal at 2.3 s): calls end within 0.7 s, from the cutoff at 3 s"
    )
    func signalAfterTheDuration() {
        let (control, clock) = Self.armed(duration: 2, grace: 1)
        let requests = StopRequests()
        requests.setGrace(1)
        clock.advance(by: .milliseconds(2300))
        control.stop(.interrupted)
        #expect(control.cutoff == 3, "the stop after the duration does not move the cutoff")
        let first = requests.record("SIGINT", control: control)
        #expect(
            first.hasPrefix("SIGINT: stopping new work; in-flight calls end within 0.7 s, then the report is written"))
        // 0.55 s later 0.15 s are left, shown rounded up, never less than is left.
        clock.advance(by: .milliseconds(550))
        #expect(StopRequests().record("SIGINT", control: control).contains("within 0.2 s,"))
        // Past the cutoff nothing is left.
        clock.advance(by: .seconds(1))
        #expect(StopRequests().record("SIGTERM", control: control).contains("within 0 s"))
    }

    @Test("SIGTERM before the run's clock starts names the grace period; once armed, the cutoff counts from the stop")
    func signalBeforeTheRunStarts() {
        let control = RunControl()
        let requests = StopRequests()
        requests.setGrace(3)
        control.stop(.terminated)
        let first = requests.record("SIGTERM", control: control)
        #expect(first.hasPrefix("SIGTERM: stopping new work; in-flight calls end within 3 s (load.grace),"))
        let clock = ManualClock()
        clock.advance(by: .seconds(7))
        control.arm(timeline: RunTimeline(clock: clock, epoch: 0), window: 10, end: 10, grace: 3)
        clock.advance(by: .milliseconds(1250))
        #expect(StopRequests().record("SIGTERM", control: control).contains("within 1.8 s,"))
    }

    @Test("a backend that accepts but never answers is reported as timed out, in words")
    func timeoutInWords() {
        let message = BackendProbe.describe(URLError(.timedOut), timeout: 5)
        #expect(message.hasPrefix("timed out after 5 s"))
        #expect(!message.contains("-1001"))
        #expect(BackendProbe.describe(URLError(.cannotConnectToHost), timeout: 5).hasPrefix("connection refused"))
    }
}
