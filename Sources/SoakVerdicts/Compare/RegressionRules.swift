import Foundation

/// `compare`'s settings for the default rule (used when the current run's profile has no
/// `expect.regression` section).
package struct RegressionRules: Sendable, Equatable, Codable {
    /// Significance level of the one-sided block test (a slowdown), Holm-corrected, default 0.05.
    package var alpha = 0.05
    /// A latency shift must also exceed this fraction of the baseline's value (default 0.10).
    package var minRelative = 0.10
    /// … and this many seconds (default 0.002): a shift of a few milliseconds at millisecond
    /// latencies is what the machine's phase does between two identical runs.
    package var minAbsoluteSeconds = 0.002
    /// Width of the blocks whose quantiles are the observations (seconds, default 1).
    package var blockSeconds = 1.0
    /// A block with fewer latencies than this is left out (its quantile would be one request's).
    package var minBlockSamples = 5
    /// Fewer blocks than this in either run: the latency is not tested.
    package var minBlocks = 5
    /// The share of each run's blocks compared: its quietest (lowest) block quantiles, so the
    /// seconds a busy machine stalled do not decide (see ``SoakComparison/quiet(_:rules:)``).
    package var quietBlockFraction = 0.5
    /// The machine counts as busier in the current run when the driver's own start lag p99 grew
    /// by this factor and by ``busierStartLagSeconds``: latency shifts are then inconclusive.
    package var busierStartLagFactor = 2.0
    package var busierStartLagSeconds = 0.010
    /// … or the machine's 1-minute load average (the higher of its readings at the run's start and
    /// end) rose by more than this: about one more core's worth of other work.
    package var busierLoadAverage = 1.0
    /// … or the hypervisor's steal share of the CPU rose by more than this.
    package var busierStealShare = 0.05
    /// … or the generator's CPU per attempt grew by this factor and by
    /// ``busierCPUPerAttemptSeconds`` (the same work cost the process more: a slower or shared core).
    package var busierCPUPerAttemptFactor = 1.5
    package var busierCPUPerAttemptSeconds = 0.000_020
    /// Limits of a healthy load generator (either run over one: latency shifts are inconclusive).
    package var healthyStartLagP99Seconds = 0.05
    package var healthyLateStartRate = 0.05

    package init() {}

    /// The rule in words, as `compare` prints it.
    package var description: [String] {
        let block = "\(ThresholdResult.format(blockSeconds)) s"
        return [
            "latency (per endpoint, attempt and call latency): each \(block) block's p50 and p95 is one observation, "
                + "and the quietest \(ThresholdResult.format(quietBlockFraction * 100))% of each run's blocks (at least "
                + "\(2 * minBlocks)) are "
                + "compared (a busy machine stalls some seconds, a slower backend slows all of them); "
                + "flagged when the current run's blocks are slower by a one-sided Mann–Whitney U test over the blocks "
                + "at p < \(ThresholdResult.format(alpha)) (Holm-corrected over all tests) and the shift "
                + "(Hodges–Lehmann, with its 95 % CI) is more than \(ThresholdResult.format(minRelative * 100))% "
                + "of the baseline and more than \(ThresholdResult.format(minAbsoluteSeconds * 1000))ms; "
                + "blocks with fewer than \(minBlockSamples) requests are left out, and a series with fewer than "
                + "\(minBlocks) blocks is not tested; journey durations are reported, not judged",
            "machine: when either run's load generator was unhealthy (start lag p99 over "
                + "\(ThresholdResult.format(healthyStartLagP99Seconds * 1000))ms, more than "
                + "\(ThresholdResult.format(healthyLateStartRate * 100))% late starts, dropped arrivals) or the "
                + "current run's start lag p99 grew more than \(ThresholdResult.format(busierStartLagFactor))× and by "
                + "more than \(ThresholdResult.format(busierStartLagSeconds * 1000))ms, or the machine's load "
                + "average rose by more than \(ThresholdResult.format(busierLoadAverage)), or the CPU steal share by "
                + "more than \(ThresholdResult.format(busierStealShare * 100)) points, or the generator's CPU per "
                + "attempt by more than \(ThresholdResult.format(busierCPUPerAttemptFactor))× and "
                + "\(ThresholdResult.format(busierCPUPerAttemptSeconds * 1e6)) µs, a flagged latency shift is "
                + "inconclusive (exit 2), not a regression",
            "verdicts: flagged when a count gets worse (early back-offs, retry violations, duplicated, lost, "
                + "too lenient, too strict, wrong N, wrong message) or an attribution correct rate drops",
        ]
    }
}
