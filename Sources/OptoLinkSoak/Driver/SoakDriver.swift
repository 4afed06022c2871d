import OptoLinkHTTP
import Synchronization
import SoakRecords
import SoakSupport

/// Runs a profile's load model over the virtual devices with structured concurrency.
///
/// - Open model: an ``ArrivalSchedule`` plans journey starts; a bounded task group starts
///   each journey at its time (fill to `maxInFlight`, then one in per one out) on an idle
///   device: a device runs one journey at a time, as a phone runs one copy of an app, so two
///   journeys never share (and dispose) one SDK instance. A journey that starts late — the
///   group was full, every device was busy, or the scheduler itself lagged — is counted and
///   its lag recorded; its calls are measured from the planned time, or from when a busy
///   device freed up (that wait is the profile's — fewer devices than concurrency — not the
///   backend's, like a load tool out of virtual users).
/// - Closed model: `concurrency` devices loop journeys back to back.
///
/// Deadlines, all on the runner's one clock (``RunControl``): no journey or step starts at
/// or after `load.duration` (or the stop); an open model without a `duration` starts no
/// journey after its stages' end and lets started journeys run their steps. In-flight work
/// then gets `grace` seconds; at the cutoff (`duration` or the stages' end, or the stop, plus
/// `grace`) a watchdog cancels every journey and disposes every SDK instance, which ends their
/// requests and back-off sleeps, and no attempt starts after it. So a run lasts at most its
/// end plus `grace` plus teardown, whatever the backend does.
package final class SoakDriver: Sendable {
    package let profile: SoakProfile
    package let devices: [VirtualDevice]
    package let runner: JourneyRunner
    package let control: RunControl
    /// The part of the plan this process runs (``SoakShard/whole`` unless `run --shard`).
    package let shard: SoakShard

    /// Journeys planned so far (open model) or started (closed model); read by the progress line.
    package let scheduled = AtomicCounter()
    package let inFlight = AtomicCounter()
    /// Open model: the most finished journeys whose results were not taken yet, seen when a
    /// journey starts (each holds its task's memory; kept small, not `maxInFlight`; for tests).
    package let finishedNotTakenPeak = Mutex(0)

    package convenience init(profile: SoakProfile, devices: [VirtualDevice], runner: JourneyRunner, control: RunControl)
    {
        self.init(profile: profile, devices: devices, runner: runner, control: control, shard: .whole)
    }

    /// A driver of one shard of the plan: `devices` is the whole population (global ids), of
    /// which the shard uses those with `index mod N == I`.
    package init(
        profile: SoakProfile, devices: [VirtualDevice], runner: JourneyRunner, control: RunControl, shard: SoakShard
    ) {
        self.shard = shard
        self.profile = profile
        self.devices = devices
        self.runner = runner
        self.control = control
    }

    private enum ChildResult: Sendable { case journey, watchdog }

    /// Why the run ended, as ``run()`` reports it.
    ///
    /// `completed` (the open model's schedule ran out and every journey ended), `iterations`
    /// (the journey budget was spent and every journey ended), `duration` (the step window
    /// closed and in-flight work ended within the grace period), `interrupted` / `terminated`
    /// (a signal stopped the run and in-flight work ended within the grace period), or
    /// `deadline` (the cutoff was reached with work still running, and that work was cancelled).
    package func run() async -> StopReason {
        let load = profile.load
        // An explicit duration closes the step window; an open model without one ends its
        // arrivals with its stages and lets started journeys run until the cutoff.
        let window = load.duration ?? .infinity
        let end = load.duration ?? (load.model == .open ? load.effectiveDuration : .infinity)
        let timeline = runner.timeline
        control.arm(timeline: timeline, window: window, end: end, grace: load.grace)
        let limit = load.iterations ?? Int.max
        let budget = AtomicCounter()
        let natural: StopReason = await withTaskGroup(of: ChildResult.self) { group in
            let clock = runner.clock
            let control = self.control
            group.addTask {
                // The watchdog: sleeps until the cutoff, which a stop can bring forward.
                await Self.sleepUntilCutoff(control, timeline: timeline, clock: clock) ? .watchdog : .journey
            }
            var tracker = Tracker()
            let natural: StopReason
            switch load.model {
            case .open:
                // In real time the arrival schedule sleeps and runs on a pacing thread of its own
                // (``PacingExecutor``: one wake-up per arrival instead of Dispatch's timer thread
                // and pool hand-off); on a virtual clock it sleeps on that clock.
                if clock is ContinuousClock, let pacer = try? PacingExecutor(name: "opl-arrivals") {
                    natural = await withTaskExecutorPreference(pacer) {
                        await openModel(&group, tracker: &tracker, end: end, limit: limit, pacer: pacer)
                    }
                    await pacer.shutdown()
                } else {
                    natural = await openModel(&group, tracker: &tracker, end: end, limit: limit, pacer: nil)
                }
            case .closed:
                natural = .duration
                closedModel(&group, tracker: &tracker, budget: budget, limit: shard.share(of: limit))
            }
            while tracker.running > 0, !tracker.cut, let result = await group.next() {
                tracker.handle(result, driver: self, group: &group)
            }
            group.cancelAll()
            // The closed model ends by its budget when a worker found it spent.
            return load.model == .closed && budget.current > shard.share(of: limit) ? .iterations : natural
        }
        if !control.wasCut { await finishBackgroundWork() }
        // Teardown: end every launch, then wait for the cancelled work to wind down (it ends at
        // once: cancellation reaches every request and sleep), so every attempt is recorded.
        let instances = devices.compactMap { device in device.state.withLock { $0.instance } }
        for device in devices { runner.endLaunch(of: device) }
        for instance in instances { await instance.waitForBackgroundWork() }
        if control.wasCut { return .deadline }
        return control.stopReason ?? natural
    }

    /// Sleeps on `clock` until the run's cutoff, re-reading it at least every 0.25 s since a
    /// stop brings it forward (to the stop + grace: still ahead unless grace < 0.25 s, and then
    /// reached at most 0.25 s late); returns `true` at the cutoff, `false` when cancelled first.
    private static func sleepUntilCutoff(_ control: RunControl, timeline: RunTimeline, clock: any Clock<Duration>)
        async -> Bool
    {
        while !Task.isCancelled {
            let now = timeline.now()
            let cutoff = control.cutoff
            if now >= cutoff { return true }
            let nap = Swift.min(cutoff - now, 0.25)
            do { try await clock.sleep(for: RunTimeline.wait(nap), tolerance: nil) } catch { return false }
        }
        return false
    }

    /// Gives the instances' fire-and-forget work (session calls, link resolutions) until the
    /// cutoff to finish; whatever is still running then is cancelled.
    private func finishBackgroundWork() async {
        let instances = devices.compactMap { device in device.state.withLock { $0.instance } }
        guard !instances.isEmpty else { return }
        let timeline = runner.timeline
        let clock = runner.clock
        let control = self.control
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for instance in instances { await instance.waitForBackgroundWork() }
                return true
            }
            group.addTask { await !Self.sleepUntilCutoff(control, timeline: timeline, clock: clock) }
            if let finished = await group.next(), !finished {
                control.markCut()
                for instance in instances { instance.dispose() }
            }
            group.cancelAll()
        }
    }

    /// Counts running journeys and handles the watchdog's firing.
    private struct Tracker {
        var running = 0
        var cut = false

        mutating func handle(_ result: ChildResult, driver: SoakDriver, group: inout TaskGroup<ChildResult>) {
            switch result {
            case .journey:
                running -= 1
            case .watchdog:
                cut = true
                guard running > 0 else { return }
                // Cut: nothing starts any more; every journey and every instance's work is cancelled.
                driver.control.markCut()
                group.cancelAll()
                // Disposing (not ending the launch) leaves each call to be closed by its own journey,
                // with the outcome it saw, or at the very end.
                for device in driver.devices { device.state.withLock { $0.instance }?.dispose() }
            }
        }
    }

    /// Starts the open model's journeys at their planned times; with a `pacer`, this task runs on
    /// it and sleeps on it, and every journey names its own executor (the global pool when its
    /// device has none), so none inherits the pacer.
    private func openModel(
        _ group: inout TaskGroup<ChildResult>, tracker: inout Tracker, end: Double, limit: Int,
        pacer: PacingExecutor?
    ) async -> StopReason {
        let load = profile.load
        var schedule = ArrivalSchedule(startRate: load.startRate, stages: load.stages, duration: end)
        var rng = SeededRandom(seed: profile.seed ^ 0x0E7E)
        let weights = profile.journeys.map(\.weight)
        let timeline = runner.timeline
        var k = 0
        let busy = BusyDevices(count: devices.count, shard: shard)
        // Each device's executor, looked up once rather than by device id (a string hash) per arrival.
        let executors = devices.map { runner.executor(for: $0) ?? globalConcurrentExecutor }
        var reason: StopReason = load.duration != nil ? .duration : .completed
        // Journeys started, and journeys whose task is over (its result may not be taken yet).
        var added = 0
        let finished = AtomicCounter()
        var notTakenPeak = 0
        // The planned arrival the loop is on and has not started yet: when the loop leaves with
        // one, it and every later arrival already due are dropped.
        var pending: Double? = nil
        while let intended = schedule.next() {
            if k >= limit {
                reason = .iterations
                break
            }
            guard shard.owns(k) else {
                // Another shard's journey: draw its picks so every later journey gets the same
                // journey and seed as in the unsharded plan, and start nothing.
                _ = rng.pickIndex(weights)
                _ = rng.next()
                k += 1
                continue
            }
            scheduled.add()
            pending = intended
            await makeRoom(&group, tracker: &tracker, added: added, finished: finished, peak: &notTakenPeak)
            if tracker.cut { break }
            // A journey planned in the schedule starts even when late (counted, with its lag),
            // unless the step window has closed.
            guard await runner.sleep(until: intended, pacer: pacer), control.stepAllowed(at: timeline.now()) else {
                break
            }
            var claimed = busy.claim(preferring: k % devices.count)
            var ready = intended
            if claimed == nil { runner.recorder.journeyWaitedForDevice() }
            while claimed == nil, tracker.running > 0, !tracker.cut, let result = await group.next() {
                tracker.handle(result, driver: self, group: &group)
                claimed = busy.claim(preferring: k % devices.count)
                ready = timeline.now()
            }
            guard let index = claimed, !tracker.cut, control.stepAllowed(at: timeline.now()) else { break }
            let start = Swift.max(intended, ready)
            let device = devices[index]
            let journey = profile.journeys[rng.pickIndex(weights)]
            var journeyRng = SeededRandom(seed: rng.next())
            let runner = self.runner
            let inFlight = self.inFlight
            group.addTask(executorPreference: executors[index]) {
                inFlight.add()
                defer {
                    inFlight.add(-1)
                    finished.add()
                }
                runner.recorder.journeyStarted(name: journey.name, lag: timeline.now() - intended)
                let completed = await runner.run(journey, on: device, intendedStart: start, rng: &journeyRng)
                runner.recorder.journeyEnded(
                    name: journey.name, completed: completed, duration: timeline.now() - intended)
                busy.release(index)
                return .journey
            }
            tracker.running += 1
            added += 1
            k += 1
            pending = nil
        }
        if let pending { countDropped(first: pending, rest: &schedule, from: k, limit: limit) }
        return reason
    }

    /// Takes the results of journeys already over, then waits until fewer than `maxInFlight` run
    /// (or the run is cut). A task group keeps a finished child (its task and every stack slab it
    /// grew) until its result is taken, so without this up to `maxInFlight` finished journeys pile
    /// up, memory that grows with the run's length. `added`: journeys started so far; `finished`:
    /// journeys whose task is over; `peak`: the loop's copy of ``finishedNotTakenPeak``, so the
    /// lock is taken only when the peak rises, not once per arrival.
    private func makeRoom(
        _ group: inout TaskGroup<ChildResult>, tracker: inout Tracker, added: Int, finished: AtomicCounter,
        peak: inout Int
    ) async {
        let notTaken = finished.current - (added - tracker.running)
        if notTaken > peak {
            peak = notTaken
            finishedNotTakenPeak.withLock { $0 = Swift.max($0, notTaken) }
        }
        while !tracker.cut, finished.current > added - tracker.running, let result = await group.next() {
            tracker.handle(result, driver: self, group: &group)
        }
        while tracker.running >= profile.load.maxInFlight, !tracker.cut, let result = await group.next() {
            tracker.handle(result, driver: self, group: &group)
        }
    }

    /// Records as dropped the arrival planned at `first` (index `k`) and every later arrival of
    /// `rest` this shard owns, within the journey budget, that was due before now: the run ended
    /// (step window closed, stop, cutoff) while they waited for a `maxInFlight` slot or a device.
    /// Arrivals planned after now were never due, so a stop does not count them.
    private func countDropped(first: Double, rest: inout ArrivalSchedule, from k: Int, limit: Int) {
        let now = runner.timeline.now()
        runner.recorder.journeyDropped(intended: first)
        var index = k + 1
        while index < limit, let intended = rest.next(), intended < now {
            if shard.owns(index) {
                scheduled.add()
                runner.recorder.journeyDropped(intended: intended)
            }
            index += 1
        }
    }

    private func closedModel(
        _ group: inout TaskGroup<ChildResult>, tracker: inout Tracker, budget: AtomicCounter, limit: Int
    ) {
        let concurrency = profile.load.concurrency ?? devices.count
        let weights = profile.journeys.map(\.weight)
        let timeline = runner.timeline
        let workers = (0..<concurrency).filter(shard.owns)
        let runner = self.runner
        let profile = self.profile
        let control = self.control
        let scheduled = self.scheduled
        let inFlight = self.inFlight
        let devices = self.devices
        // Workers run in nested groups of at most `workersPerGroup`: the Swift runtime finds a
        // finished child in its group's list of children one by one, so one flat group of 50,000
        // workers would spend seconds per batch of results and a stop would take 30 s, not its grace.
        let groups = stride(from: 0, to: workers.count, by: Self.workersPerGroup).map {
            Array(workers[$0..<Swift.min($0 + Self.workersPerGroup, workers.count)])
        }
        for members in groups {
            group.addTask {
                await withDiscardingTaskGroup { subgroup in
                    for worker in members {
                        let device = devices[worker % devices.count]
                        subgroup.addTask(executorPreference: runner.executor(for: device)) {
                            var rng = SeededRandom(seed: profile.seed ^ UInt64(worker) &* 0x9E37)
                            while !Task.isCancelled && control.stepAllowed(at: timeline.now()) {
                                if budget.add() > limit { break }
                                scheduled.add()
                                let journey = profile.journeys[rng.pickIndex(weights)]
                                let start = timeline.now()
                                inFlight.add()
                                runner.recorder.journeyStarted(name: journey.name, lag: 0)
                                let completed = await runner.run(journey, on: device, intendedStart: start, rng: &rng)
                                inFlight.add(-1)
                                runner.recorder.journeyEnded(
                                    name: journey.name, completed: completed, duration: timeline.now() - start)
                            }
                        }
                    }
                }
                return .journey
            }
        }
        tracker.running = groups.count
    }

    /// The most closed-model workers in one task group (see ``closedModel(_:tracker:budget:limit:)``).
    package static let workersPerGroup = 256
}

/// Which virtual devices are running a journey (open model): a device runs one at a time.
final class BusyDevices: Sendable {
    private let busy: Mutex<[Bool]>
    private let shard: SoakShard

    /// `count` devices, of which `shard` may claim those with `index mod N == I`.
    init(count: Int, shard: SoakShard = .whole) {
        busy = Mutex([Bool](repeating: false, count: count))
        self.shard = shard
    }

    /// Marks the first idle device of the shard at or after `preferred` (cyclically) busy and
    /// returns its index, or `nil` when every such device is busy.
    func claim(preferring preferred: Int) -> Int? {
        busy.withLock { flags in
            for offset in 0..<flags.count {
                let index = (preferred + offset) % flags.count
                if shard.owns(index), !flags[index] {
                    flags[index] = true
                    return index
                }
            }
            return nil
        }
    }

    func release(_ index: Int) { busy.withLock { $0[index] = false } }
}
