import SoakVerdicts

/// The load generator's own health during one probe: whether it started the journeys it was
/// asked to start, on time, and how much CPU it used. A probe where the generator saturated
/// measures the generator, not the backend (`invalid`).
package struct CapacityGeneratorHealth: Sendable, Equatable, Codable {
    /// Journeys planned in the probe window and journeys started.
    package var scheduled: Int
    package var started: Int
    /// Journeys that started more than 10 ms after their planned instant, and planned arrivals
    /// that never started (the in-flight cap or the step window).
    package var lateStarts: Int
    package var dropped: Int
    /// 99th percentile of the journeys' start lag, seconds.
    package var startLagP99: Double?
    /// CPU seconds over wall seconds over cores, of the generator's processes; `nil` when the
    /// generator shares its process with the embedded emulator (their CPU cannot be told apart).
    package var cpuShare: Double?
    /// CPU share of this whole process, emulator included (always measured, for the record).
    package var processCPUShare: Double

    package init(
        scheduled: Int, started: Int, lateStarts: Int, dropped: Int, startLagP99: Double?, cpuShare: Double?,
        processCPUShare: Double
    ) {
        self.scheduled = scheduled
        self.started = started
        self.lateStarts = lateStarts
        self.dropped = dropped
        self.startLagP99 = startLagP99
        self.cpuShare = cpuShare
        self.processCPUShare = processCPUShare
    }

    /// When the generator counts as saturated. The defaults (docs/CAPACITY.md, "Generator
    /// limits") sit well above what a generator with headroom shows and well below what a
    /// saturated one does; ``CapacityGeneratorLimits`` overrides them.
    package struct Limits: Sendable, Equatable, Codable {
        /// Most late starts (more than 10 ms after their planned instant), as a share of journeys
        /// started: a few stragglers behind a GC pause or a busy core are noise, a twentieth is not.
        package var lateShare = 0.05
        /// Most dropped arrivals, as a share of those planned (the last arrivals of a window can
        /// miss its end by a hair, so one drop alone does not mean the generator gave out).
        package var droppedShare = 0.01
        /// Most start lag at p99, seconds: 100 ms, far above a healthy generator's few ms, and
        /// below latency SLOs of 250 ms, so a lagging generator cannot pass as a slow backend.
        package var startLagP99 = 0.1
        /// Most CPU share of the generator's cores: above it the generator's own scheduling, not
        /// the backend, sets the pace.
        package var cpuShare = 0.9
        package init() {}
    }

    /// Why the generator counts as saturated (`nil`: it kept up). Late starts and dropped
    /// arrivals also follow from a slow backend (the in-flight cap holds new journeys back), so
    /// they make a probe invalid only when the SLO held; CPU over the limit always does.
    package func saturation(sloHeld: Bool, limits: Limits = Limits()) -> String? {
        if let cpuShare, cpuShare > limits.cpuShare {
            return "the generator used \(Self.percent(cpuShare)) of its CPU (limit \(Self.percent(limits.cpuShare)))"
        }
        guard sloHeld else { return nil }
        if scheduled > 0, Double(dropped) / Double(scheduled) > limits.droppedShare {
            return "\(dropped) planned arrivals (\(Self.percent(Double(dropped) / Double(scheduled)))) were dropped, "
                + "never started (limit \(Self.percent(limits.droppedShare)))"
        }
        if started > 0, Double(lateStarts) / Double(started) > limits.lateShare {
            return "\(Self.percent(Double(lateStarts) / Double(started))) of journeys started late "
                + "(limit \(Self.percent(limits.lateShare)))"
        }
        if let startLagP99, startLagP99 > limits.startLagP99 {
            return "start lag p99 \(Self.milliseconds(startLagP99)) (limit \(Self.milliseconds(limits.startLagP99)))"
        }
        return nil
    }

    static func percent(_ share: Double) -> String { "\(Int((share * 100).rounded())) %" }
    static func milliseconds(_ seconds: Double) -> String { "\(Int((seconds * 1000).rounded())) ms" }
}
