import Foundation
import OptoLink
import OptoLinkStaging
import Testing

import OptoLinkSoak
import SoakRecords
import SoakVerdicts
import SoakSupport
import SoakTestSupport

/// The threshold catalogue is built from the shared vocabularies; these tests hold it to what
/// runs really emit, both ways: every emitted name is known, and every spelling the catalogue
/// accepts is emitted by some run.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct MetricCatalogueTests {
    /// A run through every step kind with a declared limit and the emulator's ledger.
    static func realRunMetrics() async throws -> [String: Double] {
        // No click: every deferred match misses, so every first launch also checks in (session).
        let steps = """
            {"kind": "firstLaunch"},
            {"kind": "event", "name": "e", "repeat": 2}, {"kind": "identify", "externalId": "u-{device}"},
            {"kind": "open", "link": "promo", "style": "universal"}, {"kind": "clearIdentity"}, {"kind": "relaunch"}
            """
        let run = try EndToEndRun(
            profile: e2eProfile(
                devices: 6, rate: 10, steps: steps, thresholds: #"[], "limits": {"match": "1000/60s per ip"}"#))
        let result = await run.makeRun().execute()
        return try #require(result.summary, "\(result.error ?? "")").metrics
    }

    /// Verdict metrics over synthetic records that reach every branch (all methods, all kinds).
    /// `rss.growth_mb_per_hour` needs 3 RSS samples in the second half of a run, which the short
    /// real run above gets only when the machine is slow: a synthetic 10-sample series, growing
    /// 1 MiB every 10 s, goes through the same slope (360 MiB/h).
    static func rssGrowthMetric() -> [String: Double] {
        let samples = (0..<10).map { SoakSummary.RSSSample(t: Double($0) * 10, bytes: 100 << 20 + $0 << 20) }
        return RSSGrowth.growthMiBPerHour(samples).map { ["rss.growth_mb_per_hour": $0] } ?? [:]
    }

    static func syntheticVerdictMetrics() -> [String: Double] {
        var attribution: [AttributionRecord] = []
        for (index, method) in (AttributionVerdict.methods + ["UNKNOWN"]).enumerated() {
            attribution.append(
                AttributionRecord(
                    device: "d\(index)", clickedLinkId: "l", emittedLinkId: method == "NONE" ? nil : "l",
                    matchMethod: method == "UNKNOWN" ? nil : method, sharedNAT: index % 2 == 0))
        }
        let attempts =
            Fixture.call(.match, call: 1, [.init(status: 429, retryAfter: 1, gapAfter: 1), .init(status: 201)])
            + Fixture.call(.events, call: 2, [.init(status: nil, gapAfter: 0.5), .init(status: 200)])
        let report = Verdicts.evaluate(
            VerdictInputs(
                attempts: attempts, calls: [Fixture.callRecord(.events, call: 2, attempts: 2, corr: "r:d000001:1")],
                ledger: [Fixture.ledger("events", deviceId: "x", corr: "r:d000001:1")], attribution: attribution,
                configuration: VerdictsConfiguration(limits: [
                    "match": DeclaredLimit(limit: 1, windowSeconds: 60, scope: .ip)
                ])))
        return report.metrics()
    }

    @Test("every metric a real run emits is in the threshold catalogue")
    func emittedIsKnown() async throws {
        let metrics = try await Self.realRunMetrics().merging(Self.syntheticVerdictMetrics()) { a, _ in a }
        let unknown = metrics.keys.filter { !Thresholds.isKnownMetric($0) }.sorted()
        #expect(unknown.isEmpty, "emitted but refused as a threshold metric: \(unknown)")
        // The kind the issue found: a call outcome the recorder writes must be a valid metric.
        for outcome in CallOutcome.allCases {
            #expect(Thresholds.problem(in: "events.calls.\(outcome.rawValue) == 0") == nil, "\(outcome)")
        }
        #expect(Thresholds.problem(in: "session.calls.cancelled_by_run == 0") == nil)
    }

    @Test("every spelling the catalogue accepts is emitted by some run")
    func knownIsEmitted() async throws {
        let metrics = try await Self.realRunMetrics().merging(Self.syntheticVerdictMetrics()) { a, _ in a }
            .merging(SummaryMetrics.openMetrics(try OutageOpensTests.recordedOpens())) { a, _ in a }
            .merging(Self.rssGrowthMetric()) { a, _ in a }
        let names = metrics.keys.map { $0.split(separator: ".", omittingEmptySubsequences: false).map(String.init) }
        var never: [String] = []
        for pattern in Thresholds.catalogue {
            let emitted = names.filter { pattern.matches($0) }
            if emitted.isEmpty {
                never.append("\(pattern)")
                continue
            }
            for (position, segment) in pattern.segments.enumerated() {
                guard case .oneOf(let spellings) = segment else { continue }
                for spelling in spellings where !emitted.contains(where: { $0[position] == spelling }) {
                    never.append("\(pattern) with \(spelling) at part \(position + 1)")
                }
            }
        }
        #expect(never.isEmpty, "accepted but never emitted: \(never)")
    }

    @Test("the catalogue's endpoint and outcome spellings come from the enums")
    func derivedFromVocabularies() {
        for endpoint in ContractEndpoint.allCases {
            #expect(Thresholds.isKnownMetric("\(endpoint.rawValue).call_latency.p95"))
            #expect(Thresholds.isKnownMetric("retry.\(endpoint.rawValue).violations"))
        }
        for finding in LimitFinding.allCases {
            #expect(Thresholds.isKnownMetric("limits.match.\(finding.rawValue)"))
            #expect(Thresholds.isKnownMetric("limits.\(finding.rawValue)"))
        }
        for outcome in ReconcileOutcome.allCases { #expect(Thresholds.isKnownMetric("events.\(outcome.rawValue)")) }
        for judgement in BackoffJudgement.allCases {
            #expect(Thresholds.isKnownMetric("backoff.429.\(judgement.rawValue)"))
        }
        #expect(!Thresholds.isKnownMetric("events.calls.cancelled"))
    }
}

/// The verdicts are one pass over a time-ordered stream: the order records arrive in (memory,
/// CSV files, shards merged by time) must not change a judgement.
@Suite struct VerdictStreamTests {
    static let configuration = VerdictsConfiguration(
        limits: ["events": DeclaredLimit(limit: 2, windowSeconds: 1, scope: .key)])

    static func records() -> (attempts: [AttemptRecord], calls: [CallRecord]) {
        var attempts: [AttemptRecord] = []
        var calls: [CallRecord] = []
        for call in UInt64(1)...6 {
            let start = Double(call) * 0.3
            let steps: [Fixture.Step] =
                call % 2 == 0
                ? [.init(status: 429, retryAfter: 1, gapAfter: 1.0), .init(status: 200)]
                : [.init(status: 500, gapAfter: 0.2), .init(status: 200)]
            let rows = Fixture.call(.events, call: call, start: start, steps)
            attempts += rows
            var record = Fixture.callRecord(.events, call: call, attempts: rows.count, corr: "r:d000001:\(call)")
            record.start = rows[0].actualStart
            record.end = rows[rows.count - 1].end
            calls.append(record)
        }
        return (attempts, calls)
    }

    @Test("shuffled input, the same verdicts")
    func orderIndependent() {
        let (attempts, calls) = Self.records()
        let inputs = VerdictInputs(attempts: attempts, calls: calls, ledger: [], configuration: Self.configuration)
        let reference = Verdicts.evaluate(inputs)
        #expect(reference.backoff.total.checked == 3)  // the 429s; a 5xx on events is never retried
        #expect(reference.retries.violationsByKind["retried_5xx_telemetry"] == 3)
        for seed in 0..<5 {
            var rng = SeededRandom(seed: UInt64(seed))
            var shuffled = inputs
            shuffled.attempts = attempts.shuffled(using: &rng)
            shuffled.calls = calls.shuffled(using: &rng)
            #expect(Verdicts.evaluate(shuffled) == reference, "seed \(seed)")
        }
    }

    @Test("a call always comes after its last attempt in the stream")
    func callsFollowTheirAttempts() {
        let (attempts, calls) = Self.records()
        var early = calls
        for index in early.indices { early[index].end = 0 }  // a damaged end time
        let stream = Verdicts.timeOrdered(attempts: attempts, calls: early)
        var seen = Set<UInt64>()
        for record in stream {
            switch record {
            case .attempt(let attempt): seen.insert(attempt.callId)
            case .call(let call): #expect(seen.contains(call.callId))
            case .attribution, .ledger: break
            }
        }
    }

    @Test("the report's JSON keeps one key per registered verdict and decodes back equal")
    func reportRoundTrip() throws {
        let (attempts, calls) = Self.records()
        let report = Verdicts.evaluate(
            VerdictInputs(attempts: attempts, calls: calls, ledger: [], configuration: Self.configuration))
        let data = try JSONEncoder().encode(report)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(Set(object.keys) == Set(Verdicts.registry.map { $0.key } + ["ignoredAttempts"]))
        #expect(try JSONDecoder().decode(VerdictsReport.self, from: data) == report)
    }
}
