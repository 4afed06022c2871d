import SoakRecords
/// A run's one-word outcome (`summary.json` `result`, the first line of `summary.txt`); the exit
/// code of `run` and `merge` is derived from it, so the two never disagree.
package enum RunResult: String, Sendable, Codable, CaseIterable {
    /// Every threshold and verdict passed (exit 0).
    case passed
    /// A threshold or verdict failed, or an `abortOnFail` threshold stopped the run (exit 1).
    case failed
    /// The run cannot be judged: every response was refused (misconfigured), the `--ledger` file
    /// could not be read, or a report file is incomplete; the first note says why (exit 2).
    case invalid
    /// Every threshold passed, but the comparison with `run --baseline` found a regression (exit 1).
    case regression
    /// Every threshold passed, but the comparison with `run --baseline` could not decide: the
    /// machine or a load generator was unhealthy, or the baseline could not be compared (exit 2).
    case inconclusive
    /// SIGINT stopped the run; the report holds what was measured (exit 130).
    case interrupted
    /// SIGTERM stopped the run; the report holds what was measured (exit 143).
    case terminated

    /// The process exit code this result stands for: 0, 1, 2, 130 or 143.
    package var exitCode: Int32 {
        switch self {
        case .passed: 0
        case .failed, .regression: 1
        case .invalid, .inconclusive: 2
        case .interrupted: 130
        case .terminated: 143
        }
    }

    /// The result of a passed run after its `--baseline` comparison ended with `exitCode`
    /// (0, 1 or 2): `passed`, `regression` or `inconclusive`. Other results stand as they are.
    package func afterComparison(exitCode: Int32) -> RunResult {
        guard self == .passed else { return self }
        return exitCode == 1 ? .regression : exitCode == 2 ? .inconclusive : .passed
    }

    /// Judges a finished run: a reason it cannot be judged wins, then a stop signal, then any
    /// failed threshold (verdicts reach the thresholds as their metrics).
    /// - Parameters:
    ///   - invalidReason: why the run cannot be judged (misconfigured, unreadable ledger,
    ///     incomplete report), or `nil`.
    ///   - signal: the signal that stopped the run (`interrupted` or `terminated`), or `nil`.
    ///   - thresholds: the judged thresholds (`summary.json` `thresholds`).
    package static func judge(
        invalidReason: String?, signal: StopReason?, thresholds: [ThresholdResult]
    ) -> RunResult {
        if invalidReason != nil { return .invalid }
        switch signal {
        case .terminated?: return .terminated
        case .interrupted?: return .interrupted
        default: return thresholds.contains { !$0.passed } ? .failed : .passed
        }
    }
}
