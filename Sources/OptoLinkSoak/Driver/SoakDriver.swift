import Foundation
import Synchronization

/// Runs a profile's load model over the virtual devices with structured concurrency.
///
/// - Open model: an ``ArrivalSchedule`` plans journey starts; a bounded task group starts
///   each journey at its time (fill to `maxInFlight`, then one in per one out). A journey
///   that starts late — the group was full, or the scheduler itself lagged — is counted
///   and its lag recorded; its calls are still measured from the planned time.
/// - Closed model: `concurrency` devices loop journeys back to back.
///
/// Both stop at `duration`, after `iterations` journeys, or when ``RunControl`` stops; then
/// no new step starts, in-flight calls get `grace` seconds, and anything left is cancelled.
public final class SoakDriver: Sendable {
    public let profile: SoakProfile
    public let devices: [VirtualDevice]
    public let runner: JourneyRunner
    public let control: RunControl

    /// Journeys planned so far (open model) or started (closed model); read by the progress line.
    public let scheduled = AtomicCounter()
    public let inFlight = AtomicCounter()

    public init(profile: SoakProfile, devices: [VirtualDevice], runner: JourneyRunner, control: RunControl) {
        self.profile = profile
        self.devices = devices
        self.runner = runner
        self.control = control
    }

    private enum ChildResult: Sendable { case journey, watchdog }

    /// Runs until the load model ends or the run is stopped; returns the stop reason:
    /// `completed` (schedule or iterations done), `duration`, `iterations`, whatever stopped
    /// ``RunControl``, or `deadline` (in-flight work outlived the grace period).
    public func run() async -> StopReason {
        let duration = profile.load.effectiveDuration
        let limit = profile.load.iterations ?? Int.max
        let natural: StopReason = await withTaskGroup(of: ChildResult.self) { group in
            var running = 0
            var natural = StopReason.completed
            switch profile.load.model {
            case .open:
                (running, natural) = await openModel(&group, duration: duration, limit: limit)
            case .closed:
                running = closedModel(&group, duration: duration, limit: limit)
                natural = .completed
            }
            // No new journeys start now; in-flight ones get the grace period, then are cancelled.
            let grace = profile.load.grace
            let clock = runner.clock
            let control = self.control
            let timeline = runner.recorder.timeline
            let closedEnd = profile.load.model == .closed ? timeline.now() + duration : 0
            group.addTask {
                while !control.isStopped && timeline.now() < closedEnd && !Task.isCancelled {
                    try? await clock.sleep(for: .milliseconds(50), tolerance: nil)
                }
                try? await clock.sleep(for: .nanoseconds(Int64(grace * 1e9)), tolerance: nil)
                return .watchdog
            }
            while running > 0, let result = await group.next() {
                switch result {
                case .journey: running -= 1
                case .watchdog:
                    control.stop(.deadline)
                    group.cancelAll()
                }
            }
            group.cancelAll()
            return natural
        }
        for device in devices { runner.endLaunch(of: device) }
        return control.stopReason ?? natural
    }

    private func openModel(_ group: inout TaskGroup<ChildResult>, duration: Double, limit: Int) async -> (Int, StopReason)
    {
        var schedule = ArrivalSchedule(
            startRate: profile.load.startRate, stages: profile.load.stages, duration: duration)
        var rng = SeededRandom(seed: profile.seed ^ 0x0E7E)
        let weights = profile.journeys.map(\.weight)
        let maxInFlight = profile.load.maxInFlight
        var running = 0
        var k = 0
        var reason: StopReason = profile.load.duration != nil ? .duration : .completed
        while let intended = schedule.next() {
            if k >= limit {
                reason = .iterations
                break
            }
            scheduled.add()
            while running >= maxInFlight, let _ = await group.next() { running -= 1 }
            guard await runner.sleep(until: intended) else { break }
            let device = devices[k % devices.count]
            let journey = profile.journeys[rng.pickIndex(weights)]
            var journeyRng = SeededRandom(seed: rng.next())
            let runner = self.runner
            let inFlight = self.inFlight
            group.addTask {
                inFlight.add()
                defer { inFlight.add(-1) }
                runner.recorder.journeyStarted(name: journey.name, lag: runner.recorder.timeline.now() - intended)
                let completed = await runner.run(journey, on: device, intendedStart: intended, rng: &journeyRng)
                runner.recorder.journeyEnded(completed: completed)
                return .journey
            }
            running += 1
            k += 1
        }
        return (running, reason)
    }

    private func closedModel(_ group: inout TaskGroup<ChildResult>, duration: Double, limit: Int) -> Int {
        let concurrency = profile.load.concurrency ?? devices.count
        let budget = AtomicCounter()
        let weights = profile.journeys.map(\.weight)
        let end = runner.recorder.timeline.now() + duration
        for worker in 0..<concurrency {
            let device = devices[worker % devices.count]
            let runner = self.runner
            let profile = self.profile
            let control = self.control
            let scheduled = self.scheduled
            let inFlight = self.inFlight
            group.addTask {
                var rng = SeededRandom(seed: profile.seed ^ UInt64(worker) &* 0x9E37)
                while !control.isStopped && !Task.isCancelled {
                    if runner.recorder.timeline.now() >= end || budget.add() > limit { break }
                    scheduled.add()
                    let journey = profile.journeys[rng.pickIndex(weights)]
                    let start = runner.recorder.timeline.now()
                    inFlight.add()
                    runner.recorder.journeyStarted(name: journey.name, lag: 0)
                    let completed = await runner.run(journey, on: device, intendedStart: start, rng: &rng)
                    inFlight.add(-1)
                    runner.recorder.journeyEnded(completed: completed)
                }
                return .journey
            }
        }
        return concurrency
    }
}
