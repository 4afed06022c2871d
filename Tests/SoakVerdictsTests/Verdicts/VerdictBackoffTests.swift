import Testing

import SoakVerdicts
import SoakTestSupport

@Suite struct VerdictBackoffTests {
    let configuration = VerdictsConfiguration()

    @Test func retryAfter429IsEarlyOnTimeOrLateAgainstN() throws {
        // 429 with N = 2: gaps 1.5 (early), 2.1 (on time), 2.6 (late, beyond 250 ms).
        let attempts =
            Fixture.call(.events, call: 1, [.init(status: 429, retryAfter: 2, gapAfter: 1.5), .init(status: 200)])
            + Fixture.call(.events, call: 2, [.init(status: 429, retryAfter: 2, gapAfter: 2.1), .init(status: 200)])
            + Fixture.call(.events, call: 3, [.init(status: 429, retryAfter: 2, gapAfter: 2.6), .init(status: 200)])
        let verdict = BackoffVerdict.evaluate(attempts, configuration: configuration)
        #expect(verdict.rateLimited.checked == 3)
        #expect(verdict.rateLimited.early == 1)
        #expect(verdict.rateLimited.onTime == 1)
        #expect(verdict.rateLimited.late == 1)
        #expect(verdict.exponential.checked == 0)
        let worst = try #require(verdict.worstEarly.first)
        #expect(worst.callId == 1)
        #expect(worst.expectedSeconds == 2)
        #expect(abs(worst.gapSeconds - 1.5) < 1e-9)
        #expect(verdict.worstLate.map(\.callId) == [3])
    }

    @Test(arguments: [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (7, 5.0), (40, 5.0)])
    func exponentialTableMatchesContract(retryIndex: Int, seconds: Double) {
        #expect(ContractRetryExpectation.exponentialBackoff(retryIndex: retryIndex) == seconds)
    }

    @Test func exponentialBackoffUsesRetryIndex() {
        // match 503, 503, 200 with gaps 0.5 and 1.0: both on time. Then one with gaps 0.5, 0.5: second early.
        let good = Fixture.call(
            .match, call: 1, [.init(status: 503, gapAfter: 0.5), .init(status: nil, gapAfter: 1.0), .init(status: 201)])
        let bad = Fixture.call(
            .match, call: 2, [.init(status: 503, gapAfter: 0.5), .init(status: 502, gapAfter: 0.5), .init(status: 201)])
        let verdict = BackoffVerdict.evaluate(good + bad, configuration: configuration)
        #expect(verdict.exponential.checked == 4)
        #expect(verdict.exponential.early == 1)
        #expect(verdict.exponential.onTime == 3)
        #expect(verdict.worstEarly.first?.attempt == 3)
        #expect(verdict.worstEarly.first?.expectedSeconds == 1.0)
    }

    @Test func forbiddenRetriesAreLeftToTheAudit() {
        // An event 5xx retried instantly, a 400 retried, a session retried: not judged here.
        let attempts =
            Fixture.call(.events, call: 1, [.init(status: 500), .init(status: 200)])
            + Fixture.call(.identity, call: 2, [.init(status: 400), .init(status: 200)])
            + Fixture.call(.session, call: 3, [.init(status: nil), .init(status: 200)])
        let verdict = BackoffVerdict.evaluate(attempts, configuration: configuration)
        #expect(verdict.total.checked == 0)
    }

    @Test func a429WithoutNIsJudgedByTheExponentialTable() {
        let attempts = Fixture.call(.match, [.init(status: 429, retryAfter: nil, gapAfter: 0.2), .init(status: 201)])
        let verdict = BackoffVerdict.evaluate(attempts, configuration: configuration)
        #expect(verdict.rateLimitedWithoutN == 1)
        #expect(verdict.exponential.early == 1)
        #expect(verdict.rateLimited.checked == 0)
    }

    @Test func toleranceComesFromTheProfile() {
        let attempts = Fixture.call(.events, [.init(status: 429, retryAfter: 1, gapAfter: 1.4), .init(status: 200)])
        let strict = BackoffVerdict.evaluate(
            attempts, configuration: VerdictsConfiguration(backoffToleranceSeconds: 0.25))
        let loose = BackoffVerdict.evaluate(
            attempts, configuration: VerdictsConfiguration(backoffToleranceSeconds: 0.5))
        #expect(strict.rateLimited.late == 1)
        #expect(loose.rateLimited.onTime == 1)
    }

    @Test func attemptsAreGroupedPerCallNotPerDevice() {
        // Two calls of one device interleaved: call 2's first attempt right after call 1's 429 is no retry.
        let attempts = [
            Fixture.attempt(.events, call: 1, attempt: 1, start: 0, end: 0.1, status: 429, retryAfter: 1),
            Fixture.attempt(.events, call: 2, attempt: 1, start: 0.15, end: 0.2, status: 200),
            Fixture.attempt(.events, call: 1, attempt: 2, start: 1.1, end: 1.2, status: 200),
            Fixture.attempt(.events, device: "d000002", call: 1, attempt: 1, start: 0.1, end: 0.2, status: 200),
        ]
        let verdict = BackoffVerdict.evaluate(attempts.shuffled(), configuration: configuration)
        #expect(verdict.total.checked == 1)
        #expect(verdict.rateLimited.onTime == 1)
    }

    @Test func distributionAndHistogramCoverEveryJudgedRetry() {
        let attempts =
            Fixture.call(.events, call: 1, [.init(status: 429, retryAfter: 1, gapAfter: 0.5), .init(status: 200)])
            + Fixture.call(.events, call: 2, [.init(status: 429, retryAfter: 1, gapAfter: 1.02), .init(status: 200)])
            + Fixture.call(.events, call: 3, [.init(status: 429, retryAfter: 1, gapAfter: 3), .init(status: 200)])
        let verdict = BackoffVerdict.evaluate(attempts, configuration: configuration)
        #expect(verdict.excess.count == 3)
        #expect(abs((verdict.excess.min ?? 0) + 0.5) < 1e-9)
        #expect(abs((verdict.excess.max ?? 0) - 2) < 1e-9)
        #expect(verdict.excessHistogram.map(\.count) == [1, 1, 0, 0, 1, 0])
        let metrics = VerdictsReport.empty(backoff: verdict).metrics()
        #expect(metrics["backoff.early"] == 1)
        #expect(metrics["backoff.on_time"] == 1)
        #expect(metrics["backoff.late"] == 1)
        #expect(metrics["backoff.429.early"] == 1)
        #expect(metrics["backoff.exponential.checked"] == 0)
    }
}

extension VerdictsReport {
    /// A report whose other sections are computed from no records.
    static func empty(
        backoff: BackoffVerdict? = nil, retries: RetryMatrixVerdict? = nil, limits: LimitOracleVerdict? = nil
    ) -> VerdictsReport {
        let none = Verdicts.evaluate(VerdictInputs(attempts: [], calls: [], ledger: nil))
        return VerdictsReport(
            backoff: backoff ?? none.backoff, retries: retries ?? none.retries, reconciliation: none.reconciliation,
            limits: limits ?? none.limits, attribution: none.attribution)
    }
}
