/// The machine around two runs, side by side (`compare.json` `machine`): load average, CPU
/// steal, and the generator's CPU per attempt. A latency shift measured while the current run's
/// machine was measurably busier, or its generator needed more CPU for the same work, cannot be
/// told from the machine's, so ``SoakComparison/judgeMachine(rules:)`` makes it inconclusive.
package struct MachineComparison: Sendable, Codable, Equatable {
    package var baseline: SoakSummary.MachineLoad?
    package var current: SoakSummary.MachineLoad?
    /// The generator process's CPU seconds per HTTP attempt (`nil` when a run did not record it).
    package var baselineCPUPerAttempt: Double?
    package var currentCPUPerAttempt: Double?

    package init(
        baseline: SoakSummary.MachineLoad?, current: SoakSummary.MachineLoad?, baselineCPUPerAttempt: Double?,
        currentCPUPerAttempt: Double?
    ) {
        self.baseline = baseline
        self.current = current
        self.baselineCPUPerAttempt = baselineCPUPerAttempt
        self.currentCPUPerAttempt = currentCPUPerAttempt
    }

    package init(baseline b: SoakSummary, current c: SoakSummary) {
        baseline = b.run.machine
        current = c.run.machine
        baselineCPUPerAttempt = Self.cpuPerAttempt(b)
        currentCPUPerAttempt = Self.cpuPerAttempt(c)
    }

    static func cpuPerAttempt(_ summary: SoakSummary) -> Double? {
        guard let generator = summary.run.generator, summary.totals.attempts > 0 else { return nil }
        return generator.cpuSeconds / Double(summary.totals.attempts)
    }

    /// `load average 0.4 → 1.2 · steal 0 → 0 % · generator CPU per attempt 31 → 33 µs` (baseline →
    /// current), the parts both runs have; `nil` when they share none.
    package var line: String? {
        func pair(_ b: Double?, _ c: Double?, _ format: (Double) -> String) -> String? {
            guard let b, let c else { return nil }
            return "\(format(b)) → \(format(c))"
        }
        let parts = [
            pair(baseline?.peakLoadAverage, current?.peakLoadAverage) { ThresholdResult.format($0) }
                .map { "load average \($0)" },
            pair(baseline?.stealShare, current?.stealShare) { ThresholdResult.format($0 * 100) }
                .map { "steal \($0) %" },
            pair(baselineCPUPerAttempt, currentCPUPerAttempt) { ThresholdResult.format(($0 * 1e6).rounded()) }
                .map { "generator CPU per attempt \($0) µs" },
        ].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: " · ")
    }

    /// Why the current run's machine counts as busier than the baseline's, in words; empty when
    /// it does not (or when either run lacks the evidence).
    package func busierReasons(rules: RegressionRules) -> [String] {
        var reasons: [String] = []
        if let b = baseline?.peakLoadAverage, let c = current?.peakLoadAverage, c - b > rules.busierLoadAverage {
            reasons.append(
                "the machine's 1-minute load average went \(ThresholdResult.format(b)) → "
                    + "\(ThresholdResult.format(c)) (more than \(ThresholdResult.format(rules.busierLoadAverage)) up)")
        }
        if let b = baseline?.stealShare, let c = current?.stealShare, c - b > rules.busierStealShare {
            reasons.append(
                "the hypervisor took \(ThresholdResult.format(c * 100))% of the CPU time (baseline "
                    + "\(ThresholdResult.format(b * 100))%)")
        }
        if let b = baselineCPUPerAttempt, let c = currentCPUPerAttempt,
            c > b * rules.busierCPUPerAttemptFactor, c - b > rules.busierCPUPerAttemptSeconds
        {
            reasons.append(
                "the generator needed more CPU per attempt: \(ThresholdResult.format(b * 1e6)) → "
                    + "\(ThresholdResult.format(c * 1e6)) µs")
        }
        return reasons
    }
}
