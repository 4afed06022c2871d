import Foundation
import OptoLinkTestSupport
import Testing

@testable import OptoLinkSoak

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

    @Test("the second signal says the run is already stopping and how long in-flight calls may take")
    func secondSignal() {
        let (control, clock) = Self.armed(duration: 60, grace: 15)
        let requests = StopRequests()
        requests.setGrace(15)
        clock.advance(by: .seconds(20))
        control.stop(.interrupted)
        let first = requests.record("SIGINT", control: control)
        #expect(first == "SIGINT: stopping new work; in-flight calls end within 15 s, then the report is written…")
        clock.advance(by: .seconds(5))
        let second = requests.record("SIGINT", control: control)
        #expect(second == "SIGINT again: already stopping; in-flight calls end within 10 s, then the report is written")
        #expect(requests.count == 2)
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
        #expect(first == "SIGINT: stopping new work; in-flight calls end within 0.7 s, then the report is written…")
        // A second signal 0.55 s later: 0.15 s are left, shown rounded up, never less than is left.
        clock.advance(by: .milliseconds(550))
        let second = requests.record("SIGINT", control: control)
        #expect(second.hasPrefix("SIGINT again: already stopping; in-flight calls end within 0.2 s,"))
        // Past the cutoff nothing is left.
        clock.advance(by: .seconds(1))
        #expect(requests.record("SIGTERM", control: control).contains("within 0 s"))
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
        let second = requests.record("SIGTERM", control: control)
        #expect(second.hasPrefix("SIGTERM again: already stopping; in-flight calls end within 1.8 s,"))
    }

    @Test("a backend that accepts but never answers is reported as timed out, in words")
    func timeoutInWords() {
        let message = BackendProbe.describe(URLError(.timedOut), timeout: 5)
        #expect(message.hasPrefix("timed out after 5 s"))
        #expect(!message.contains("-1001"))
        #expect(BackendProbe.describe(URLError(.cannotConnectToHost), timeout: 5).hasPrefix("connection refused"))
    }
}
