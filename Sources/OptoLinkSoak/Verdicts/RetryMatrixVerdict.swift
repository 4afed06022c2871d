import OptoLink

/// Retry-matrix audit: did every call retry exactly where CONTRACT §2's matrix says, within
/// the `maxRetries + 1` attempt budget?
///
/// Violations, one per offending retry (or per call for the budget and missing-retry kinds):
/// `retried_5xx_telemetry` (a 5xx retried on identity/clear/events), `retried_session`,
/// `retried_4xx` (a 4xx other than 429), `retried_success`, `over_budget` (more than
/// `maxRetries + 1` attempts), `missing_retry` (the call ended on a failure the matrix retries
/// while budget was left). A call whose last attempt ended too close to the end of the run for
/// its back-off to elapse, or whose call the run cancelled while it waited (outcome `cancelled`),
/// is counted as `cutShort`, not as a missing retry.
public struct RetryMatrixVerdict: Sendable, Codable, Equatable {
    /// The kinds of violation, as metric suffixes.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case retried5xxTelemetry = "retried_5xx_telemetry"
        case retriedSession = "retried_session"
        case retried4xx = "retried_4xx"
        case retriedSuccess = "retried_success"
        case overBudget = "over_budget"
        case missingRetry = "missing_retry"
    }

    /// One violation: the call and the attempt after which it happened.
    public struct Violation: Sendable, Codable, Equatable {
        public var kind: Kind
        public var device: String
        public var launch: Int
        public var callId: UInt64
        public var endpoint: OptoLinkEndpoint
        public var attempt: Int
        public var status: Int?
        public var errorKind: String?
    }

    /// Calls seen in the attempt records.
    public var calls: Int
    /// Endpoint → attempts per call → number of calls.
    public var attemptsPerCall: [String: [String: Int]]
    public var violations: Int
    public var violationsByKind: [String: Int]
    public var violationsByEndpoint: [String: Int]
    /// The first violations in call order, at most the profile's offender count.
    public var examples: [Violation]
    /// Calls stopped by the end of the run before their back-off elapsed.
    public var cutShort: Int
    /// Calls whose `calls.csv` attempt count disagrees with their `attempts.csv` rows.
    public var inconsistentCalls: Int

    /// Audits every call in `attempts` (cross-checked against `calls`).
    public static func evaluate(
        attempts: [AttemptRecord], calls: [CallRecord], maxRetries: Int, configuration: VerdictsConfiguration
    ) -> RetryMatrixVerdict {
        evaluate(groups: CallKey.group(attempts), calls: calls, maxRetries: maxRetries, configuration: configuration)
    }

    /// The same over attempts already grouped by call.
    static func evaluate(
        groups: [CallKey.Group], calls: [CallRecord], maxRetries: Int, configuration: VerdictsConfiguration
    ) -> RetryMatrixVerdict {
        let budget = max(0, maxRetries) + 1
        let runEnd = groups.lazy.flatMap(\.attempts).map(\.end).max() ?? 0
        var histogram: [String: [String: Int]] = [:]
        var found: [Violation] = []
        var cutShort = 0
        // Calls the run itself cancelled (the driver records outcome `cancelled`): the client was
        // still waiting to retry when the run stopped it, so a missing retry is the run's doing.
        let cancelledByRun = Set(calls.lazy.filter { $0.outcome == "cancelled" }.map(CallKey.init))

        for (key, callAttempts) in groups {
            guard let first = callAttempts.first, let last = callAttempts.last else { continue }
            let endpoint = first.endpoint
            histogram[endpoint.rawValue, default: [:]][String(callAttempts.count), default: 0] += 1
            func violation(_ kind: Kind, after attempt: AttemptRecord) -> Violation {
                Violation(
                    kind: kind, device: key.device, launch: key.launch, callId: key.callId, endpoint: endpoint,
                    attempt: attempt.attempt, status: attempt.status, errorKind: attempt.errorKind)
            }
            for previous in callAttempts.dropLast() {
                if let kind = forbiddenRetryKind(after: ContractRetryExpectation.Outcome(previous), endpoint: endpoint) {
                    found.append(violation(kind, after: previous))
                }
            }
            if callAttempts.count > budget {
                found.append(violation(.overBudget, after: callAttempts[budget - 1]))
            }
            let outcome = ContractRetryExpectation.Outcome(last)
            if callAttempts.count < budget, ContractRetryExpectation.requiresRetry(after: outcome, endpoint: endpoint) {
                let wait = ContractRetryExpectation.expectedBackoff(after: outcome, retryIndex: callAttempts.count - 1)
                if last.end + wait >= runEnd || cancelledByRun.contains(key) {
                    cutShort += 1
                } else {
                    found.append(violation(.missingRetry, after: last))
                }
            }
        }

        var recorded: [CallKey: Int] = [:]
        for (key, callAttempts) in groups { recorded[key] = callAttempts.count }
        let inconsistent = calls.filter { call in recorded[CallKey(call)].map { $0 != call.attempts } ?? false }.count

        var byKind: [String: Int] = [:]
        var byEndpoint: [String: Int] = [:]
        for violation in found {
            byKind[violation.kind.rawValue, default: 0] += 1
            byEndpoint[violation.endpoint.rawValue, default: 0] += 1
        }
        return RetryMatrixVerdict(
            calls: groups.count, attemptsPerCall: histogram, violations: found.count, violationsByKind: byKind,
            violationsByEndpoint: byEndpoint, examples: Array(found.prefix(max(0, configuration.worstOffenderCount))),
            cutShort: cutShort, inconsistentCalls: inconsistent)
    }

    /// The violation a retry after `outcome` is, or `nil` when the matrix permits it.
    static func forbiddenRetryKind(after outcome: ContractRetryExpectation.Outcome, endpoint: OptoLinkEndpoint) -> Kind? {
        let column = ContractRetryExpectation.column(of: endpoint)
        if column == .session { return .retriedSession }
        switch outcome {
        case .success: return .retriedSuccess
        case .noResponse, .rateLimited: return nil
        case .serverError: return column == .telemetry ? .retried5xxTelemetry : nil
        case .clientError, .other: return .retried4xx
        }
    }

    func addMetrics(to metrics: inout [String: Double]) {
        metrics["retry.calls"] = Double(calls)
        metrics["retry.violations"] = Double(violations)
        for kind in Kind.allCases { metrics["retry.violations.\(kind.rawValue)"] = Double(violationsByKind[kind.rawValue] ?? 0) }
        for endpoint in OptoLinkEndpoint.allCases {
            metrics["retry.\(endpoint.rawValue).violations"] = Double(violationsByEndpoint[endpoint.rawValue] ?? 0)
        }
        metrics["retry.cut_short"] = Double(cutShort)
        metrics["retry.inconsistent_calls"] = Double(inconsistentCalls)
        let retried = attemptsPerCall.values.flatMap { $0 }.filter { (Int($0.key) ?? 1) > 1 }.reduce(0) { $0 + $1.value }
        metrics["retry.retried_calls"] = Double(retried)
        let maxAttempts = attemptsPerCall.values.flatMap(\.keys).compactMap { Int($0) }.max() ?? 0
        metrics["retry.attempts_per_call.max"] = Double(maxAttempts)
    }
}
