import Foundation
import Testing

import SoakRecords
import SoakVerdicts
import SoakTestSupport

/// Thresholds that cannot pass vacuously or with the wrong unit (issue 9, faults 2 and 4).
@Suite struct ThresholdJudgementTests {
    @Test(
        "a duration unit on a rate, a count or a size is an error before the run",
        arguments: [
            ("http.429.rate < 250ms", "http.429.rate is a rate"),
            ("http.errors.rate < 1s", "http.errors.rate is a rate"),
            ("backoff.early == 0ms", "backoff.early is a count"),
            ("retry.violations < 2s", "retry.violations is a count"),
            ("rss.max_bytes < 5ms", "rss.max_bytes is a size in bytes"),
            ("limits.match.too_lenient == 0s", "limits.match.too_lenient is a count"),
            ("events.lost < 1%", "events.lost is a count"),
            ("match.call_latency.p95 < 5%", "match.call_latency.p95 is a duration"),
        ])
    func unitMismatch(expression: String, fragment: String) throws {
        let problem = try #require(Thresholds.problem(in: expression), "\(expression) accepted")
        #expect(problem.contains(fragment), "\(problem)")
    }

    @Test(
        "units that fit are accepted",
        arguments: [
            "http.429.rate < 5%", "http.errors.rate < 0.01", "match.call_latency.p95 < 250ms",
            "backoff.gap_excess.p99 < 1s", "attribution.correct_rate > 90%", "journeys.start_lag.p99 < 0.5",
        ])
    func unitsThatFit(expression: String) {
        #expect(Thresholds.problem(in: expression) == nil, "\(expression)")
    }

    @Test(
        "did-you-mean names the nearest valid metric of the same endpoint",
        arguments: [
            ("events.p95", "events.call_latency.p95"),
            ("events.latency.p95", "events.call_latency.p95"),
            ("match.latency.p99", "match.call_latency.p99"),
            ("session.p50", "session.call_latency.p50"),
            ("match.call_latncy.p95", "match.call_latency.p95"),
            ("backof.early", "backoff.early"),
            ("identity.lots", "identity.lost"),
        ])
    func suggestions(metric: String, expected: String) {
        #expect(Thresholds.suggestion(for: metric) == expected, "\(metric)")
        #expect(Thresholds.problem(in: "\(metric) < 1")?.contains("did you mean \(expected)?") == true)
    }

    @Test("no suggestion for a name that resembles nothing")
    func noSuggestion() {
        #expect(Thresholds.suggestion(for: "foo") == nil)
    }

    @Test("a verdict that judged nothing, or a rate over no samples, is 'not exercised' and fails unless optional")
    func notExercised() {
        let metrics = ["backoff.early": 0.0, "http.errors.rate": 0, "retry.violations": 0, "backoff.429.early": 0]
        let notExercised = ["backoff": "no retry was judged", "http": "no HTTP attempt was made"]
        let results = Thresholds.evaluate(
            [
                "backoff.early == 0", ThresholdSpec("backoff.429.early == 0", optional: true), "http.errors.rate < 1%",
                "retry.violations == 0",
            ], metrics: metrics, notExercised: notExercised)
        #expect(results.map(\.passed) == [false, true, false, true])
        #expect(
            results[0].line
                == "FAIL backoff.early == 0 (not exercised: no retry was judged; mark it optional if that is expected)")
        #expect(results[1].line.hasPrefix("SKIP backoff.429.early == 0 (not exercised, optional"))
        #expect(results[2].notExercised == "no HTTP attempt was made")
        #expect(results[3].notExercised == nil)
    }

    @Test("verdicts say what they did not exercise")
    func verdictNotExercised() {
        let empty = Verdicts.evaluate(
            VerdictInputs(
                attempts: [], calls: [], ledger: [],
                configuration: VerdictsConfiguration(limits: [
                    "match": DeclaredLimit(limit: 30, windowSeconds: 60, scope: .ip)
                ])))
        let reasons = empty.notExercised()
        #expect(reasons["backoff"] != nil)
        #expect(reasons["retry"] != nil)
        #expect(reasons["limits.match"]?.contains("never reached") == true)
        #expect(reasons["reconcile"] != nil)
        #expect(reasons["events.lost"] != nil)
        // A limit that got its 429s is exercised.
        let attempts: [AttemptRecord] = [
            Fixture.attempt(.match, call: 1, start: 0.0, status: 201),
            Fixture.attempt(.match, call: 2, start: 0.1, status: 201),
            Fixture.attempt(.match, call: 3, start: 0.2, status: 429, retryAfter: 60),
        ]
        let reached = Verdicts.evaluate(
            VerdictInputs(
                attempts: attempts, calls: [], ledger: nil,
                configuration: VerdictsConfiguration(limits: [
                    "match": DeclaredLimit(limit: 2, windowSeconds: 60, scope: .ip)
                ])))
        #expect(reached.notExercised()["limits.match"] == nil)
        #expect(reached.notExercised()["limits"] == nil)
    }

    @Test("thresholds decode as strings or objects with optional, abortOnFail and delayAbortEval")
    func specDecoding() throws {
        let json =
            #"["a.b == 0", {"threshold": "http.failed.rate == 0", "abortOnFail": true, "delayAbortEval": "3s"}, {"threshold": "backoff.early == 0", "optional": true}]"#
        let specs = try JSONDecoder().decode([ThresholdSpec].self, from: Data(json.utf8))
        #expect(
            specs == [
                "a.b == 0", ThresholdSpec("http.failed.rate == 0", abortOnFail: true, delayAbortEvalSeconds: 3),
                ThresholdSpec("backoff.early == 0", optional: true),
            ])
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode(
                [ThresholdSpec].self, from: Data(#"[{"threshold": "a == 1", "abortOnFial": true}]"#.utf8))
        }
    }
}
