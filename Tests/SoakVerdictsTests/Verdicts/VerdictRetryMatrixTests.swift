import Testing

import SoakRecords
import SoakVerdicts
import SoakTestSupport

@Suite struct VerdictRetryMatrixTests {
    let configuration = VerdictsConfiguration()

    func audit(_ attempts: [AttemptRecord], calls: [CallRecord] = [], maxRetries: Int = 2) -> RetryMatrixVerdict {
        RetryMatrixVerdict.evaluate(
            attempts: attempts, calls: calls, maxRetries: maxRetries, configuration: configuration)
    }

    @Test func wellBehavedCallsHaveNoViolations() {
        let attempts =
            Fixture.call(
                .match, call: 1,
                [.init(status: 503, gapAfter: 0.5), .init(status: nil, gapAfter: 1), .init(status: 201)])
            + Fixture.call(
                .events, call: 2,
                [.init(status: nil, gapAfter: 0.5), .init(status: 429, retryAfter: 1, gapAfter: 1), .init(status: 200)])
            + Fixture.call(.events, call: 3, [.init(status: 500)])  // telemetry 5xx: stop
            + Fixture.call(.identity, call: 4, [.init(status: 404)])
            + Fixture.call(.session, call: 5, [.init(status: nil)])  // session: never retried
            + Fixture.call(
                .data, call: 6,
                [.init(status: 502, gapAfter: 0.5), .init(status: 502, gapAfter: 1), .init(status: 502)])
            + Fixture.call(.match, call: 7, start: 100, [.init(status: 201)])  // ends the run
        let verdict = audit(attempts)
        #expect(verdict.violations == 0)
        #expect(verdict.calls == 7)
        #expect(verdict.attemptsPerCall["match"] == ["3": 1, "1": 1])
        #expect(verdict.attemptsPerCall["data"] == ["3": 1])
        #expect(verdict.attemptsPerCall["events"] == ["3": 1, "1": 1])
    }

    @Test(arguments: [
        (ContractEndpoint.events, 500, RetryMatrixVerdict.Kind.retried5xxTelemetry),
        (.identity, 503, .retried5xxTelemetry),
        (.identityClear, 502, .retried5xxTelemetry),
        (.session, 503, .retriedSession),
        (.session, 429, .retriedSession),
        (.match, 400, .retried4xx),
        (.events, 404, .retried4xx),
        (.data, 200, .retriedSuccess),
    ])
    func forbiddenRetryIsCounted(endpoint: ContractEndpoint, status: Int, kind: RetryMatrixVerdict.Kind) {
        let attempts =
            Fixture.call(endpoint, call: 1, [.init(status: status, gapAfter: 1), .init(status: 200)])
            + Fixture.call(.match, call: 2, start: 100, [.init(status: 201)])
        let verdict = audit(attempts)
        #expect(verdict.violations == 1)
        #expect(verdict.violationsByKind == [kind.rawValue: 1])
        #expect(verdict.violationsByEndpoint == [endpoint.rawValue: 1])
        #expect(verdict.examples.first?.attempt == 1)
        #expect(verdict.examples.first?.status == status)
    }

    @Test func sessionRetriedAfterNoResponseIsAViolation() {
        let attempts = Fixture.call(.session, [.init(status: nil, gapAfter: 0.5), .init(status: 200)])
        #expect(audit(attempts).violationsByKind == ["retried_session": 1])
    }

    @Test func moreThanTheBudgetIsOneViolationPerCall() {
        let steps: [Fixture.Step] = Array(repeating: .init(status: 503, gapAfter: 5), count: 5) + [.init(status: 201)]
        let attempts = Fixture.call(.match, steps) + Fixture.call(.match, call: 2, start: 1_000, [.init(status: 201)])
        let verdict = audit(attempts, maxRetries: 2)
        #expect(verdict.violationsByKind == ["over_budget": 1])
        #expect(verdict.examples.first?.attempt == 3)
        #expect(audit(attempts, maxRetries: 5).violations == 0)
    }

    @Test func missingRetryWhereTheMatrixRequiresOne() {
        let attempts =
            Fixture.call(.match, call: 1, [.init(status: 503)])  // 5xx on match: must retry
            + Fixture.call(.events, call: 2, [.init(status: 429, retryAfter: 1)])  // 429: must retry
            + Fixture.call(.identity, call: 3, [.init(status: nil)])  // timeout: must retry
            + Fixture.call(
                .match, call: 4,
                // budget spent
                [.init(status: 503, gapAfter: 0.5), .init(status: 503, gapAfter: 1), .init(status: 503)])
            + Fixture.call(.match, call: 5, start: 100, [.init(status: 201)])
        let verdict = audit(attempts)
        #expect(verdict.violationsByKind == ["missing_retry": 3])
        #expect(verdict.cutShort == 0)
    }

    @Test func callsStoppedByTheEndOfTheRunAreCutShortNotMissing() {
        let attempts =
            Fixture.call(.match, call: 1, start: 1, [.init(status: 201)])
            + Fixture.call(.events, call: 2, start: 1.5, [.init(status: 429, retryAfter: 30)])
        let verdict = audit(attempts)
        #expect(verdict.violations == 0)
        #expect(verdict.cutShort == 1)
    }

    @Test func aCallTheRunCancelledDuringItsBackOffIsCutShortOnlyThen() {
        // Events 429 with N = 60 at t = 1, and the run goes on to t = 100: the retry was due at 61.
        let attempts =
            Fixture.call(.events, call: 2, start: 1, [.init(status: 429, retryAfter: 60)])
            + Fixture.call(.match, call: 5, start: 100, [.init(status: 201)])
        // The driver saw the call cancelled by the run (grace deadline) while it slept: cut short.
        let cancelled = audit(attempts, calls: [Fixture.callRecord(.events, call: 2, outcome: .cancelledByRun)])
        #expect(cancelled.violations == 0)
        #expect(cancelled.cutShort == 1)
        // The same attempts where the client gave up by itself (threw the 429): a missing retry.
        let gaveUp = audit(attempts, calls: [Fixture.callRecord(.events, call: 2, outcome: .apiError)])
        #expect(gaveUp.violationsByKind == ["missing_retry": 1])
        #expect(gaveUp.cutShort == 0)
    }

    @Test func cancelledAttemptsNeedNoRetry() {
        let attempts =
            [Fixture.attempt(.match, start: 1, status: nil, error: .cancelled)]
            + Fixture.call(.match, call: 2, start: 100, [.init(status: 201)])
        #expect(audit(attempts).violations == 0)
    }

    @Test func callRecordsThatDisagreeWithAttemptRowsAreCounted() {
        let attempts = Fixture.call(.events, [.init(status: nil, gapAfter: 0.5), .init(status: 200)])
        let calls = [Fixture.callRecord(.events, attempts: 2), Fixture.callRecord(.events, call: 9, attempts: 1)]
        #expect(audit(attempts, calls: calls).inconsistentCalls == 0)
        #expect(audit(attempts, calls: [Fixture.callRecord(.events, attempts: 3)]).inconsistentCalls == 1)
    }

    @Test func metricsNameEveryKind() {
        let attempts = Fixture.call(.events, [.init(status: 500, gapAfter: 1), .init(status: 200)])
        let metrics = VerdictsReport.empty(retries: audit(attempts)).metrics()
        #expect(metrics["retry.violations"] == 1)
        #expect(metrics["retry.violations.retried_5xx_telemetry"] == 1)
        #expect(metrics["retry.violations.missing_retry"] == 0)
        #expect(metrics["retry.events.violations"] == 1)
        #expect(metrics["retry.attempts_per_call.max"] == 2)
        #expect(metrics["retry.retried_calls"] == 1)
    }
}

@Suite struct VerdictHostileInputTests {
    @Test func nonFiniteTimesAreIgnoredAndCountedNeverTrapped() {
        var attempts = Fixture.call(.events, [.init(status: 429, retryAfter: 1, gapAfter: 1), .init(status: 200)])
        attempts.append(Fixture.attempt(.events, call: 2, start: .nan, end: .infinity, status: 429, retryAfter: 1))
        attempts.append(Fixture.attempt(.events, call: 3, attempt: 0, start: 5, status: 200))
        let configuration = VerdictsConfiguration(
            limits: ["events": DeclaredLimit(limit: 1, windowSeconds: 1e300, scope: .key)], algorithm: .fixedWindow)
        let report = Verdicts.evaluate(
            VerdictInputs(attempts: attempts, calls: [], ledger: [], configuration: configuration))
        #expect(report.ignoredAttempts == 2)
        #expect(report.metrics()["verdicts.ignored_attempts"] == 2)
        #expect(report.backoff.total.checked == 1)
        var sliding = configuration
        sliding.algorithm = .slidingWindow
        _ = Verdicts.evaluate(VerdictInputs(attempts: attempts, calls: [], ledger: [], configuration: sliding))
            .summaryLines()
    }

    @Test func aNegativeRetryBudgetCountsAsNone() {
        let attempts =
            Fixture.call(.events, [.init(status: nil, gapAfter: 0.5), .init(status: 200)])
            + Fixture.call(.match, call: 2, start: 100, [.init(status: 201)])
        let verdict = RetryMatrixVerdict.evaluate(
            attempts: attempts, calls: [], maxRetries: -3, configuration: VerdictsConfiguration())
        #expect(verdict.violationsByKind == ["over_budget": 1])
    }
}
