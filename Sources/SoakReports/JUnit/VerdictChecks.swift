import Foundation
import SoakVerdicts

/// Each verdict of a run as one pass / fail / not-judged check, for the JUnit file and the
/// HTML report's verdict table. The rules are the verdicts' own (`Profiles/verdicts/README.md`):
/// a back-off verdict fails on an early retry, the retry audit on a violation, reconciliation on a
/// duplicated or lost write or a ledger that had not caught up with the run, a limit bucket on a too-lenient, too-strict, wrong-`N` or
/// wrong-message hit; attribution is reported (its rates are gated by thresholds, not here).
package struct VerdictCheck: Sendable, Equatable, Codable {
    package enum Status: String, Sendable, Codable {
        case passed, failed
        /// The verdict judged nothing (no retries, no ledger, limit never reached).
        case notJudged = "not_judged"
    }

    /// `backoff`, `retry_matrix`, `reconciliation`, `limits.<bucket>`, `attribution`.
    package var name: String
    package var status: Status
    /// One line: the counts behind the status.
    package var detail: String

    /// The checks of `summary` (empty when it has no verdicts section).
    package static func checks(_ summary: SoakSummary) -> [VerdictCheck] {
        guard let v = summary.verdicts else { return [] }
        var checks: [VerdictCheck] = []
        let backoff = v.backoff.total
        checks.append(
            VerdictCheck(
                name: "backoff",
                status: backoff.checked == 0 ? .notJudged : backoff.early > 0 ? .failed : .passed,
                detail: "\(backoff.checked) retries judged: \(backoff.early) early, \(backoff.onTime) on time, "
                    + "\(backoff.late) late"))
        let kinds = v.retries.violationsByKind.filter { $0.value > 0 }.sorted { $0.key < $1.key }
            .map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        checks.append(
            VerdictCheck(
                name: "retry_matrix",
                status: v.retries.calls == 0 ? .notJudged : v.retries.violations > 0 ? .failed : .passed,
                detail: "\(v.retries.calls) calls, \(v.retries.violations) violations"
                    + (kinds.isEmpty ? "" : " (\(kinds))")))
        let r = v.reconciliation
        let duplicated = r.endpoints.values.reduce(0) { $0 + $1.duplicated }
        let lost = r.endpoints.values.reduce(0) { $0 + $1.lost }
        let calls = r.endpoints.values.reduce(0) { $0 + $1.calls }
        checks.append(
            VerdictCheck(
                name: "reconciliation",
                status: !r.available || calls == 0
                    ? .notJudged : duplicated + lost > 0 || r.incomplete != nil ? .failed : .passed,
                detail: r.available
                    ? "\(calls) writes: \(duplicated) duplicated, \(lost) lost"
                        + (r.incomplete.map { "; \($0.description)" } ?? "")
                    : (r.note ?? "no server ledger")))
        for (name, bucket) in v.limits.buckets.sorted(by: { $0.key < $1.key }) {
            let wrong = bucket.tooLenient + bucket.tooStrict + bucket.wrongN + bucket.wrongMessage
            let status: Status = wrong > 0 ? .failed : bucket.reachedLimit ? .passed : .notJudged
            checks.append(
                VerdictCheck(
                    name: "limits.\(name)", status: status,
                    detail: "\(bucket.declared): \(bucket.accepted) accepted, \(bucket.rejected) rejected, "
                        + "\(bucket.tooLenient) too lenient, \(bucket.tooStrict) too strict, \(bucket.wrongN) wrong N, "
                        + "\(bucket.wrongMessage) wrong message, \(bucket.ambiguous) ambiguous"
                        + (bucket.priorUse > 0 ? ", \(bucket.priorUse) explained by use before the run" : "")))
        }
        let a = v.attribution.overall
        checks.append(
            VerdictCheck(
                name: "attribution", status: a.devices == 0 ? .notJudged : .passed,
                detail: "\(a.devices) devices: \(a.correct) correct, \(a.wrongLink) wrong link, \(a.missed) missed, "
                    + "\(a.falsePositive) false positive, \(a.organic) organic"
                    + (a.correctRate.map { String(format: " (correct rate %.1f%%)", $0 * 100) } ?? "")))
        return checks
    }
}

extension JUnitReport {
    /// The JUnit file of one run: a `thresholds` suite (one case per threshold) and a
    /// `verdicts` suite (one case per verdict check).
    package static func run(_ summary: SoakSummary) -> JUnitReport {
        let properties = [
            ("profile", summary.run.profile), ("runId", summary.run.runId), ("backend", summary.run.baseURL),
            ("stopReason", summary.run.stopReason.rawValue),
        ]
        let thresholds = summary.thresholds.map { t in
            TestCase(
                name: t.expression, className: "optolink-soak.thresholds",
                result: t.notExercised != nil && t.passed
                    ? .skipped(message: t.line) : t.passed ? .passed : .failed(message: t.line, detail: t.message),
                output: t.observed.map { "observed \(Thresholds.display($0, like: t.expression))" })
        }
        return JUnitReport(
            name: "optolink-soak run \(summary.run.profile)",
            suites: [
                Suite(
                    name: "thresholds", cases: thresholds, properties: properties, timestamp: summary.run.startedAt),
                Suite(
                    name: "verdicts", cases: VerdictCheck.checks(summary).map { $0.testCase },
                    properties: properties, timestamp: summary.run.startedAt),
            ])
    }
}

extension VerdictCheck {
    var testCase: JUnitReport.TestCase {
        let result: JUnitReport.TestCase.Result =
            switch status {
            case .passed: .passed
            case .failed: .failed(message: "\(name): \(detail)", detail: nil)
            case .notJudged: .skipped(message: "judged nothing: \(detail)")
            }
        return JUnitReport.TestCase(name: name, className: "optolink-soak.verdicts", result: result, output: detail)
    }
}
