import Testing

import SoakVerdicts

@Suite struct ThresholdTests {
    let metrics: [String: Double] = [
        "match.call_latency.p95": 0.2, "backoff.early": 0, "http.errors.rate": 0.02, "events.duplicated": 3,
    ]

    @Test(arguments: [
        ("match.call_latency.p95 < 250ms", true),
        ("match.call_latency.p95 < 200ms", false),
        ("match.call_latency.p95 <= 200ms", true),
        ("match.call_latency.p95 < 0.1s", false),
        ("match.call_latency.p95 > 0.19", true),
        ("match.call_latency.p95>=0.2", true),
        ("backoff.early == 0", true),
        ("backoff.early != 0", false),
        ("events.duplicated == 0", false),
        ("events.duplicated >= 3", true),
        ("http.errors.rate < 0.01", false),
        ("http.errors.rate < 3%", true),
        ("  backoff.early   ==   0  ", true),
    ])
    func evaluatesComparisons(expression: String, passed: Bool) throws {
        let result = try #require(Thresholds.evaluate([expression], metrics: metrics).first)
        #expect(result.passed == passed)
        #expect(result.expression == expression)
        #expect(result.observed != nil)
        #expect(result.message == nil)
    }

    @Test func reportsMetricObservedAndLimit() throws {
        let result = try #require(Thresholds.evaluate(["match.call_latency.p95 < 250ms"], metrics: metrics).first)
        #expect(result.metric == "match.call_latency.p95")
        #expect(result.observed == 0.2)
        #expect(result.limit == 0.25)
        #expect(result.line.hasPrefix("PASS"))
    }

    @Test(arguments: [
        ("latency.p99 < 1s", "not available"),
        ("backoff.early", "no operator"),
        ("backoff.early == ", "bad value"),
        ("backoff.early == zero", "bad value"),
        ("== 0", "bad metric name"),
        ("back off == 0", "bad metric name"),
        ("backoff.early == 5 ms extra", "bad value"),
        ("", "no operator"),
    ])
    func failsWithAClearMessage(expression: String, message: String) throws {
        let result = try #require(Thresholds.evaluate([expression], metrics: metrics).first)
        #expect(!result.passed)
        #expect(result.observed == nil)
        #expect(result.message?.contains(message) == true, "\(result.message ?? "nil")")
        #expect(result.line.hasPrefix("FAIL"))
    }

    @Test func nonFiniteMetricFails() throws {
        let result = try #require(Thresholds.evaluate(["x < 1"], metrics: ["x": .nan]).first)
        #expect(!result.passed)
    }

    @Test func keepsOrderAndEvaluatesEach() {
        let results = Thresholds.evaluate(
            ["backoff.early == 0", "nope < 1", "events.duplicated == 3"], metrics: metrics)
        #expect(results.map(\.passed) == [true, false, true])
    }

    @Test(arguments: [("250ms", 0.25), ("1.5s", 1.5), ("1%", 0.01), ("3", 3.0), ("-2", -2.0), ("1e-3", 0.001)])
    func valueUnits(text: String, value: Double) {
        #expect(Thresholds.parseValue(text) == value)
    }
}
