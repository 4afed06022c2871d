import SoakRecords

/// Retry-matrix audit: did every call retry exactly where docs/CONTRACT.md §2's matrix says, within
/// the `maxRetries + 1` attempt budget?
///
/// Violations, one per offending retry (or per call for the budget and missing-retry kinds):
/// `retried_5xx_telemetry` (a 5xx retried on identity/clear/events), `retried_session`,
/// `retried_4xx` (a 4xx other than 429), `retried_success`, `over_budget` (more than
/// `maxRetries + 1` attempts), `missing_retry` (the call ended on a failure the matrix retries
/// while budget was left). A call whose last attempt ended too close to the end of the run for
/// its back-off to elapse, or whose call the run cancelled while it waited (outcome `cancelled`),
/// is counted as `cutShort`, not as a missing retry.
package struct RetryMatrixVerdict: Verdict {
    /// The kinds of violation, as metric suffixes.
    package enum Kind: String, Sendable, Codable, CaseIterable {
        case retried5xxTelemetry = "retried_5xx_telemetry"
        case retriedSession = "retried_session"
        case retried4xx = "retried_4xx"
        case retriedSuccess = "retried_success"
        case overBudget = "over_budget"
        case missingRetry = "missing_retry"
    }

    /// One violation: the call and the attempt after which it happened.
    package struct Violation: Sendable, Codable, Equatable {
        package var kind: Kind
        package var device: String
        package var launch: Int
        package var callId: UInt64
        package var endpoint: ContractEndpoint
        package var attempt: Int
        package var status: Int?
        package var errorKind: AttemptErrorKind?
    }

    /// Calls seen in the attempt records.
    package var calls: Int
    /// Endpoint → attempts per call → number of calls.
    package var attemptsPerCall: [String: [String: Int]]
    package var violations: Int
    package var violationsByKind: [String: Int]
    package var violationsByEndpoint: [String: Int]
    /// The first violations in call order, at most the profile's offender count.
    package var examples: [Violation]
    /// Calls stopped by the end of the run before their back-off elapsed.
    package var cutShort: Int
    /// Calls whose `calls.csv` attempt count disagrees with their `attempts.csv` rows.
    package var inconsistentCalls: Int

    /// Audits every call in `attempts` (cross-checked against `calls`).
    package static func evaluate(
        attempts: [AttemptRecord], calls: [CallRecord], maxRetries: Int, configuration: VerdictsConfiguration
    ) -> RetryMatrixVerdict {
        Verdicts.run(
            Self.self, attempts: attempts, calls: calls,
            context: VerdictContext(configuration: configuration, maxRetries: maxRetries))
    }

    package static let key = "retries"

    package static var metricPatterns: [MetricPattern] {
        [
            MetricPattern("retry", ["calls", "violations", "cut_short", "inconsistent_calls", "retried_calls"]),
            MetricPattern("retry", "violations", .cases(of: Kind.self)),
            MetricPattern("retry", .cases(of: ContractEndpoint.self), "violations"),
            MetricPattern("retry", "attempts_per_call", "max"),
        ]
    }

    package static func makePass(_ context: VerdictContext) -> Pass {
        Pass(maxRetries: context.maxRetries, configuration: context.configuration)
    }

    package var notExercised: [String: String] {
        calls == 0 ? ["retry": "no call was made"] : [:]
    }

    /// Audits each call when its call record arrives (grouped by ``CallGroupPass``); missing retries
    /// wait for the end of the stream, which decides whether the run cut them short.
    package struct Pass: CallGroupPass {
        let budget: Int
        package typealias Output = RetryMatrixVerdict
        package var ownGroups = CallGroups()
        var calls = 0
        /// Endpoint → attempts per call → calls; counted by integers per call, named at the end.
        var histogram: [ContractEndpoint: [Int: Int]] = [:]
        var byKind: [String: Int] = [:]
        var byEndpoint: [String: Int] = [:]
        var violations = 0
        var examples: WorstList<Violation>
        var cutShort = 0
        var inconsistent = 0
        /// Missing-retry candidates: the violation and when the retry was due (seconds since run start).
        package var missing: [(violation: Violation, order: WorstOrder, due: Double)] = []

        init(maxRetries: Int, configuration: VerdictsConfiguration) {
            budget = max(0, maxRetries) + 1
            examples = WorstList(limit: max(0, configuration.worstOffenderCount))
        }

        package mutating func judge(_ group: CallGroups.Closed, streamEnd: Double) {
            audit(group)
            // A missing retry whose due time the stream has passed is a violation whatever comes
            // later (the run's end is later still), so it need not wait for the end.
            if missing.count >= 64, let earliest = missing.lazy.map(\.due).min(), streamEnd > earliest {
                for candidate in missing where candidate.due < streamEnd {
                    count(candidate.violation, order: candidate.order)
                }
                missing.removeAll { $0.due < streamEnd }
            }
        }

        package mutating func finish(streamEnd runEnd: Double) -> RetryMatrixVerdict {
            for candidate in missing {
                if candidate.due >= runEnd {
                    cutShort += 1
                } else {
                    count(candidate.violation, order: candidate.order)
                }
            }
            return RetryMatrixVerdict(
                calls: calls, attemptsPerCall: Self.named(histogram), violations: violations, violationsByKind: byKind,
                violationsByEndpoint: byEndpoint, examples: examples.sorted, cutShort: cutShort,
                inconsistentCalls: inconsistent)
        }

        /// The attempts-per-call histogram as the report names it: endpoint name → count as text → calls.
        static func named(_ histogram: [ContractEndpoint: [Int: Int]]) -> [String: [String: Int]] {
            var named: [String: [String: Int]] = [:]
            for (endpoint, counts) in histogram {
                for (attempts, calls) in counts {
                    named[endpoint.rawValue, default: [:]][String(attempts), default: 0] += calls
                }
            }
            return named
        }

        private mutating func count(_ violation: Violation, order: WorstOrder) {
            violations += 1
            byKind[violation.kind.rawValue, default: 0] += 1
            byEndpoint[violation.endpoint.rawValue, default: 0] += 1
            examples.insert(violation, badness: 0, order: order)
        }

        private mutating func audit(_ closed: CallGroups.Closed) {
            let key = closed.key
            let callAttempts = closed.attempts
            guard let first = callAttempts.first, let last = callAttempts.last else { return }
            calls += 1
            if let call = closed.call, call.attempts != callAttempts.count { inconsistent += 1 }
            let endpoint = first.endpoint
            histogram[endpoint, default: [:]][callAttempts.count, default: 0] += 1
            var sequence = 0
            func violation(_ kind: Kind, after attempt: AttemptRecord) -> (Violation, WorstOrder) {
                defer { sequence += 1 }
                return (
                    Violation(
                        kind: kind, device: key.device, launch: key.launch, callId: key.callId, endpoint: endpoint,
                        attempt: attempt.attempt, status: attempt.status, errorKind: attempt.errorKind),
                    WorstOrder(key: key, attempt: sequence)
                )
            }
            // A session retried after the recorder had closed the call (it waited past the quiet
            // deadline) comes as a call of its own starting at attempt 2 or later: still a retry.
            if first.attempt > 1, ContractRetryExpectation.column(of: endpoint) == .session {
                let found = Violation(
                    kind: .retriedSession, device: key.device, launch: key.launch, callId: key.callId,
                    endpoint: endpoint, attempt: first.attempt - 1, status: nil, errorKind: nil)
                count(found, order: WorstOrder(key: key, attempt: -1))
            }
            for previous in callAttempts.dropLast() {
                if let kind = RetryMatrixVerdict.forbiddenRetryKind(
                    after: ContractRetryExpectation.Outcome(previous), endpoint: endpoint)
                {
                    let (found, order) = violation(kind, after: previous)
                    count(found, order: order)
                }
            }
            if callAttempts.count > budget {
                let (found, order) = violation(.overBudget, after: callAttempts[budget - 1])
                count(found, order: order)
            }
            let outcome = ContractRetryExpectation.Outcome(last)
            if callAttempts.count < budget, ContractRetryExpectation.requiresRetry(after: outcome, endpoint: endpoint) {
                // The run itself cancelled the call (outcome `cancelled_by_run`): the client was still
                // waiting to retry when the run stopped it, so a missing retry is the run's doing.
                if closed.call?.outcome == .cancelledByRun {
                    cutShort += 1
                } else {
                    let wait = ContractRetryExpectation.expectedBackoff(
                        after: outcome, retryIndex: callAttempts.count - 1)
                    let (found, order) = violation(.missingRetry, after: last)
                    missing.append((found, order, last.end + wait))
                }
            }
        }
    }

    /// The violation a retry after `outcome` is, or `nil` when the matrix permits it.
    static func forbiddenRetryKind(after outcome: ContractRetryExpectation.Outcome, endpoint: ContractEndpoint) -> Kind?
    {
        let column = ContractRetryExpectation.column(of: endpoint)
        if column == .session { return .retriedSession }
        switch outcome {
        case .success: return .retriedSuccess
        case .noResponse, .rateLimited: return nil
        case .serverError: return column == .telemetry ? .retried5xxTelemetry : nil
        case .clientError, .other: return .retried4xx
        }
    }

    package func addMetrics(to metrics: inout [String: Double]) {
        metrics["retry.calls"] = Double(calls)
        metrics["retry.violations"] = Double(violations)
        for kind in Kind.allCases {
            metrics["retry.violations.\(kind.rawValue)"] = Double(violationsByKind[kind.rawValue] ?? 0)
        }
        for endpoint in ContractEndpoint.allCases {
            metrics["retry.\(endpoint.rawValue).violations"] = Double(violationsByEndpoint[endpoint.rawValue] ?? 0)
        }
        metrics["retry.cut_short"] = Double(cutShort)
        metrics["retry.inconsistent_calls"] = Double(inconsistentCalls)
        let retried = attemptsPerCall.values.flatMap { $0 }.filter { (Int($0.key) ?? 1) > 1 }.reduce(0) {
            $0 + $1.value
        }
        metrics["retry.retried_calls"] = Double(retried)
        let maxAttempts = attemptsPerCall.values.flatMap(\.keys).compactMap { Int($0) }.max() ?? 0
        metrics["retry.attempts_per_call.max"] = Double(maxAttempts)
    }
}
