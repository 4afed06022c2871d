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

    /// Runs until the load model ends or the run is stopped; returns the stop reason.
    public func run() async -> String {
        let duration = profile.load.effectiveDuration
        let limit = profile.load.iterations ?? Int.max
        await withTaskGroup(of: ChildResult.self) { group in
            var running = 0
            switch profile.load.model {
            case .open:
                running = await openModel(&group, duration: duration, limit: limit)
            case .closed:
                running = closedModel(&group, duration: duration, limit: limit)
            }
            // Stop new work; give in-flight calls the grace period, then cancel the rest.
            let grace = profile.load.grace
            let clock = runner.clock
            let control = self.control
            let closed = profile.load.model == .closed
            group.addTask {
                if closed {
                    // The closed model's loop ends on the stop flag; wait for it first.
                    while !control.isStopped {
                        try? await clock.sleep(for: .milliseconds(50), tolerance: nil)
                        if Task.isCancelled { return .watchdog }
                    }
                }
                try? await clock.sleep(for: .nanoseconds(Int64(grace * 1e9)), tolerance: nil)
                return .watchdog
            }
            while running > 0, let result = await group.next() {
                switch result {
                case .journey: running -= 1
                case .watchdog:
                    group.cancelAll()
                }
            }
            group.cancelAll()
        }
        for device in devices { runner.endLaunch(of: device) }
        return control.stopReason ?? "completed"
    }

    private func openModel(_ group: inout TaskGroup<ChildResult>, duration: Double, limit: Int) async -> Int {
        var schedule = ArrivalSchedule(
            startRate: profile.load.startRate, stages: profile.load.stages, duration: duration)
        var rng = SeededRandom(seed: profile.seed ^ 0x0E7E)
        let weights = profile.journeys.map(\.weight)
        let maxInFlight = profile.load.maxInFlight
        var running = 0
        var k = 0
        while let intended = schedule.next() {
            if k >= limit {
                control.stop("iterations")
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
        control.stop(control.isStopped ? "interrupted" : "duration")
        return running
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
                    if runner.recorder.timeline.now() >= end {
                        control.stop("duration")
                        break
                    }
                    if budget.add() > limit {
                        control.stop("iterations")
                        break
                    }
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
        // The closed model's workers stop themselves at `end`; a watchdog stops the flag too.
        let control = self.control
        let clock = runner.clock
        let timeline = runner.recorder.timeline
        group.addTask {
            while !control.isStopped && !Task.isCancelled {
                let remaining = end - timeline.now()
                if remaining <= 0 {
                    control.stop("duration")
                    break
                }
                try? await clock.sleep(for: .nanoseconds(Int64(Swift.min(remaining, 0.1) * 1e9)), tolerance: nil)
            }
            return .journey
        }
        return concurrency + 1
    }
}
