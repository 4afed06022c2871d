import SoakVerdicts
import Testing

/// When the machine around the current run counts as busier than the baseline's: its load
/// average, the hypervisor's steal, and the generator's CPU per attempt, each against the
/// default rule's limits; and the line `compare.md` shows.
@Suite("machine comparison")
struct MachineComparisonTests {
    static func load(_ start: Double?, _ end: Double?, steal: Double? = 0) -> SoakSummary.MachineLoad {
        SoakSummary.MachineLoad(loadAverageAtStart: start, loadAverageAtEnd: end, stealShare: steal)
    }

    @Test("the same machine load and CPU per attempt: not busier")
    func sameMachine() {
        let same = MachineComparison(
            baseline: Self.load(0.4, 1.1), current: Self.load(0.6, 1.3), baselineCPUPerAttempt: 30e-6,
            currentCPUPerAttempt: 33e-6)
        #expect(same.busierReasons(rules: RegressionRules()).isEmpty)
        #expect(same.line == "load average 1.1 → 1.3 · steal 0 → 0 % · generator CPU per attempt 30 → 33 µs")
    }

    @Test("a load average more than one higher, steal over 5 points, CPU per attempt 1.5× and 20 µs up: busier")
    func busier() {
        let rules = RegressionRules()
        let loaded = MachineComparison(
            baseline: Self.load(0.3, 0.9), current: Self.load(2.1, 1.0), baselineCPUPerAttempt: nil,
            currentCPUPerAttempt: nil)
        #expect(loaded.busierReasons(rules: rules).count == 1)
        #expect(loaded.busierReasons(rules: rules).first?.contains("load average went 0.9 → 2.1") == true)
        let stolen = MachineComparison(
            baseline: Self.load(1, 1, steal: 0.01), current: Self.load(1, 1, steal: 0.08), baselineCPUPerAttempt: nil,
            currentCPUPerAttempt: nil)
        #expect(stolen.busierReasons(rules: rules).first?.contains("hypervisor took 8%") == true)
        let slower = MachineComparison(
            baseline: nil, current: nil, baselineCPUPerAttempt: 30e-6, currentCPUPerAttempt: 60e-6)
        #expect(slower.busierReasons(rules: rules).first?.contains("30 → 60 µs") == true)
        // Twice the CPU, but only 10 µs more: under the absolute floor.
        let tiny = MachineComparison(
            baseline: nil, current: nil, baselineCPUPerAttempt: 10e-6, currentCPUPerAttempt: 20e-6)
        #expect(tiny.busierReasons(rules: rules).isEmpty)
    }

    @Test("a run without the evidence (an older report, no /proc) is not judged on it")
    func missingEvidence() {
        let older = MachineComparison(
            baseline: nil, current: Self.load(3, 3), baselineCPUPerAttempt: nil, currentCPUPerAttempt: 50e-6)
        #expect(older.busierReasons(rules: RegressionRules()).isEmpty)
        #expect(older.line == nil)
    }
}
