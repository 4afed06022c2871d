import Foundation
import SoakRecords
import SoakVerdicts

/// What a shard (`run --shard I/N`, and each `run --processes` child) judges of its own run:
/// that it ran its course, that it reached the backend, and that its load generator kept up.
/// The profile's thresholds count the whole plan (`deferred.first_launches >= 150` fails on
/// any half by construction), so a shard does not judge them; `merge` judges them once, on
/// the merged report. A healthy shard exits 0 whatever the thresholds will say.
package enum ShardHealth {
    /// Most CPU a shard's process may use, as a share of the machine's cores over the run,
    /// before its generator counts as saturated (it then measured itself, not the backend).
    package static let cpuShareLimit = 0.9

    /// The health rows of a shard's summary (its `thresholds`), each passed or failed.
    /// - Parameters:
    ///   - summary: the shard's measured summary (journeys, endpoints, stop reason).
    ///   - cpuShare: the process's CPU seconds over the run's wall seconds over the cores, or
    ///     `nil` when not measured.
    package static func rows(_ summary: SoakSummary, cpuShare: Double?) -> [ThresholdResult] {
        [ranItsCourse(summary), reachedBackend(summary), generatorKeptUp(cpuShare)]
    }

    /// The failed rows' one-line reasons, `shard I/N: …` (for `merge`'s refusal).
    package static func problems(_ rows: [ThresholdResult]?, shard: SoakShard) -> [String] {
        (rows ?? []).filter { !$0.passed }.map { "shard \(shard): \($0.message ?? $0.expression)" }
    }

    /// Started what it planned and reached its natural end (a signal, an abortOnFail stop and a
    /// misconfigured backend have their own result and rows).
    static func ranItsCourse(_ summary: SoakSummary) -> ThresholdResult {
        let started = summary.journeys.started
        let planned = summary.journeys.scheduled
        let stop = summary.run.stopReason
        let startedNothing = started == 0 && planned != 0
        let cut = [.misconfigured, .thresholdAborted].contains(stop)
        let message: String? =
            startedNothing
            ? "the shard started none of its \(planned) planned journeys (stop: \(stop.rawValue))"
            : cut ? "the shard stopped early (\(stop.rawValue)) and did not run its part of the plan" : nil
        return ThresholdResult(
            expression: "shard.ran_its_course", metric: "journeys.started", observed: Double(started), limit: nil,
            passed: message == nil, message: message)
    }

    /// At least one attempt got an HTTP response: a shard whose every attempt failed to connect
    /// (or timed out) measured its own network, not the backend.
    static func reachedBackend(_ summary: SoakSummary) -> ThresholdResult {
        let attempts = summary.totals.attempts
        let responses = summary.endpoints.values.reduce(0) { total, endpoint in
            total + endpoint.byStatus.reduce(0) { $0 + (Int($1.key) == nil ? 0 : $1.value) }
        }
        let passed = attempts == 0 || responses > 0
        return ThresholdResult(
            expression: "shard.reached_backend", metric: "http.responses", observed: Double(responses), limit: nil,
            passed: passed,
            message: passed
                ? nil
                : "none of the shard's \(attempts) attempts got an HTTP response from \(summary.run.baseURL) "
                    + "(unreachable from this machine?)")
    }

    /// The generator was not saturated: its process used at most ``cpuShareLimit`` of the cores.
    static func generatorKeptUp(_ cpuShare: Double?) -> ThresholdResult {
        let passed = (cpuShare ?? 0) <= cpuShareLimit
        let percent = { (share: Double) in "\(Int((share * 100).rounded())) %" }
        return ThresholdResult(
            expression: "shard.generator_cpu_share <= \(cpuShareLimit)", metric: "shard.generator_cpu_share",
            observed: cpuShare, limit: cpuShareLimit, passed: passed,
            message: passed
                ? nil
                : "the shard's process used \(percent(cpuShare ?? 0)) of the machine's CPU (limit "
                    + "\(percent(cpuShareLimit))): its generator was saturated, so its latencies measure the "
                    + "generator; run more shards")
    }

    /// The note of a shard's report saying what it judged and what it left to `merge`.
    package static func note(_ shard: SoakShard) -> String {
        "shard \(shard): judged on its own health only (ran its course, reached the backend, generator not "
            + "saturated); the profile's thresholds count the whole plan and are judged once, by `merge`, on the "
            + "merged report. The verdicts below cover this shard's slice"
    }

    /// The part of the plan `shard` ran.
    package static func slice(_ shard: SoakShard, profile: SoakProfile, journeys: Int) -> ShardSlice {
        let planDevices = profile.devices.count
        let devices = shard.share(of: planDevices)
        let loadShare =
            profile.load.model == .open
            ? 1 / Double(shard.count) : planDevices > 0 ? Double(devices) / Double(planDevices) : 0
        return ShardSlice(devices: devices, planDevices: planDevices, journeys: journeys, loadShare: loadShare)
    }
}
