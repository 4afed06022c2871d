import Foundation
import SoakRecords

/// `compare`'s settings for the default rule (used when the current run's profile has no
/// `expect.regression` section).
package struct RegressionRules: Sendable, Equatable, Codable {
    /// Significance level of the one-sided Mann–Whitney U test (a slowdown), default 0.01.
    package var alpha = 0.01
    /// A latency shift must also exceed this fraction of the baseline's value (default 0.10).
    package var minRelative = 0.10
    /// … and this many seconds (default 0.005), so sub-millisecond jitter is never a regression.
    package var minAbsoluteSeconds = 0.005
    /// Fewer samples than this in either run: the latency test is not run (normal approximation).
    package var minSamples = 20
    /// The machine counts as busier in the current run when the driver's own start lag p99 grew
    /// by this factor and by ``busierStartLagSeconds``: latency shifts are then inconclusive.
    package var busierStartLagFactor = 2.0
    package var busierStartLagSeconds = 0.002

    package init() {}

    /// The rule in words, as `compare` prints it.
    package var description: [String] {
        [
            "latency (per endpoint, attempt and call latency; per journey, its duration): flagged when the current run is slower by a "
                + "one-sided Mann–Whitney U test at p < \(ThresholdResult.format(alpha)) (Holm-corrected over all "
                + "endpoints), and p50, p95 or p99 grew by "
                + "more than \(ThresholdResult.format(minRelative * 100))% and by more than "
                + "\(ThresholdResult.format(minAbsoluteSeconds * 1000))ms",
            "machine: when the soak process itself was slowed in the current run (its start lag p99 grew more than "
                + "\(ThresholdResult.format(busierStartLagFactor))× and by more than "
                + "\(ThresholdResult.format(busierStartLagSeconds * 1000))ms), a flagged latency shift is inconclusive "
                + "(exit 2), not a regression",
            "verdicts: flagged when a count gets worse (early back-offs, retry violations, duplicated, lost, "
                + "too lenient, too strict, wrong N, wrong message) or an attribution correct rate drops",
        ]
    }
}

/// The result of `optolink-soak compare BASELINE CURRENT`: per-endpoint and per-verdict deltas,
/// the latency tests and the regression checks; written as `compare.json` and `compare.md`.
package struct SoakComparison: Sendable, Codable {
    package var schemaVersion = 1

    /// Which runs were compared.
    package struct RunReference: Sendable, Codable, Equatable {
        package var directory: String
        package var runId: String
        package var profile: String
        package var profileHash: String?
        package var startedAt: String
        package var durationSeconds: Double
    }

    /// A value in both runs: absolute and relative change (`relative` is `nil` when the baseline is 0).
    package struct Delta: Sendable, Codable, Equatable {
        package var baseline: Double
        package var current: Double
        package var absolute: Double
        package var relative: Double?

        package init(_ baseline: Double, _ current: Double) {
            self.baseline = baseline
            self.current = current
            absolute = current - baseline
            relative = baseline != 0 ? (current - baseline) / abs(baseline) : nil
        }
    }

    /// One latency distribution of one endpoint in both runs, and the test between them.
    package struct LatencyComparison: Sendable, Codable, Equatable {
        /// `attempt` (one HTTP attempt) or `call` (whole call from its intended start).
        package var kind: String
        package var p50: Delta
        package var p95: Delta
        package var p99: Delta
        /// `nil` when either run had fewer than ``RegressionRules/minSamples`` values.
        package var test: MannWhitneyU?
        /// Flagged by the default rule.
        package var regressed: Bool
        /// Why (or why not) in words.
        package var reason: String
    }

    package struct EndpointComparison: Sendable, Codable, Equatable {
        package var endpoint: String
        package var attempts: Delta
        package var calls: Delta
        /// 429s per attempt.
        package var rate429: Delta
        /// Failed attempts per attempt (5xx and no response).
        package var failedRate: Delta
        package var latency: [LatencyComparison]
    }

    /// One journey in both runs: how many started and were cut short, and its duration from the
    /// intended start (completed journeys; `summary.json` `journeys.durationFromIntended`).
    package struct JourneyComparison: Sendable, Codable, Equatable {
        package var name: String
        package var started: Delta
        package var unfinished: Delta
        /// `kind` is `journey`; judged by the default rule like an endpoint's latency.
        package var duration: LatencyComparison
    }

    /// A verdict metric in both runs; `worse` when it moved the wrong way.
    package struct VerdictComparison: Sendable, Codable, Equatable {
        package var metric: String
        package var baseline: Double?
        package var current: Double?
        /// `lower` (counts) or `higher` (correct rates) is better.
        package var better: String
        package var worse: Bool
        package var changed: Bool
    }

    package var baseline: RunReference
    package var current: RunReference
    /// `default` (the printed default rule) or `profile` (the current profile's `expect.regression`).
    package var rule: String
    /// The rule in words (default), or the profile's expressions.
    package var ruleText: [String]
    package var settings: RegressionRules
    /// True when the profiles differ and `--force` compared them anyway.
    package var forced: Bool
    package var notes: [String]
    package var endpoints: [EndpointComparison]
    package var journeys: [JourneyComparison]
    package var verdicts: [VerdictComparison]
    /// Every check behind the outcome: the profile's rules, or the default rule's latency and verdict checks.
    package var checks: [RegressionCheck]
    /// True when a check failed (latency checks made inconclusive by a busier machine excepted).
    package var regressed: Bool
    /// The driver's start lag p99 in both runs (seconds): how much the machine itself slowed the soak process.
    package var startLagP99: Delta
    /// The machine was clearly busier in the current run (see ``RegressionRules/busierStartLagFactor``).
    package var machineBusier: Bool
    /// A latency shift was flagged while the machine was busier: the comparison cannot tell the
    /// code from the machine (exit code 2 unless something else regressed).
    package var inconclusive: Bool

    /// The verdict metrics compared, with which direction is better.
    static let verdictMetrics: [(String, String)] = [
        ("backoff.early", "lower"), ("retry.violations", "lower"), ("reconcile.duplicated", "lower"),
        ("reconcile.lost", "lower"), ("limits.too_lenient", "lower"), ("limits.too_strict", "lower"),
        ("limits.wrong_n", "lower"), ("limits.wrong_message", "lower"), ("attribution.correct_rate", "higher"),
    ]

    /// Compares `current` against `baseline`. Does not check the profile fingerprints (see ``CompareCommand``).
    package static func compare(
        baseline b: SoakReportDirectory, current c: SoakReportDirectory, rules: RegressionRules = RegressionRules(),
        forced: Bool = false, notes: [String] = []
    ) -> SoakComparison {
        let endpointNames = Set(b.summary.endpoints.keys).union(c.summary.endpoints.keys).sorted()
        var endpoints: [EndpointComparison] = []
        for name in endpointNames {
            let be = b.summary.endpoints[name]
            let ce = c.summary.endpoints[name]
            func rate(_ e: SoakSummary.EndpointSummary?, _ count: (SoakSummary.EndpointSummary) -> Int) -> Double {
                guard let e, e.attempts > 0 else { return 0 }
                return Double(count(e)) / Double(e.attempts)
            }
            var latency: [LatencyComparison] = []
            for kind in ["attempt", "call"] {
                let bh = be.map { kind == "attempt" ? $0.attemptLatency : $0.callLatency }
                let ch = ce.map { kind == "attempt" ? $0.attemptLatency : $0.callLatency }
                latency.append(latencyComparison(kind: kind, baseline: bh, current: ch, rules: rules))
            }
            endpoints.append(
                EndpointComparison(
                    endpoint: name, attempts: Delta(Double(be?.attempts ?? 0), Double(ce?.attempts ?? 0)),
                    calls: Delta(Double(be?.calls ?? 0), Double(ce?.calls ?? 0)),
                    rate429: Delta(rate(be) { $0.byStatus["429"] ?? 0 }, rate(ce) { $0.byStatus["429"] ?? 0 }),
                    failedRate: Delta(rate(be, failedAttempts), rate(ce, failedAttempts)), latency: latency))
        }
        var journeys: [JourneyComparison] = []
        let bj = b.summary.journeys
        let cj = c.summary.journeys
        for name in Set(bj.durationFromIntended.keys).union(cj.durationFromIntended.keys).sorted() {
            journeys.append(
                JourneyComparison(
                    name: name, started: Delta(Double(bj.byName[name] ?? 0), Double(cj.byName[name] ?? 0)),
                    unfinished: Delta(Double(bj.unfinishedByName[name] ?? 0), Double(cj.unfinishedByName[name] ?? 0)),
                    duration: latencyComparison(
                        kind: "journey", baseline: bj.durationFromIntended[name],
                        current: cj.durationFromIntended[name],
                        rules: rules)))
        }
        // One family for Holm's procedure: every endpoint latency and every journey duration.
        var groups = endpoints.map(\.latency) + journeys.map { [$0.duration] }
        judgeLatency(&groups, rules: rules)
        for i in endpoints.indices { endpoints[i].latency = groups[i] }
        for i in journeys.indices { journeys[i].duration = groups[endpoints.count + i][0] }

        var metricNames = verdictMetrics
        let methods = Set(b.summary.metrics.keys).union(c.summary.metrics.keys)
            .filter { $0.hasPrefix("attribution.method.") && $0.hasSuffix(".correct_rate") }.sorted()
        metricNames += methods.map { ($0, "higher") }
        let verdicts = metricNames.map { metric, better in
            let bv = b.summary.metrics[metric]
            let cv = c.summary.metrics[metric]
            var worse = false
            if let bv, let cv { worse = better == "lower" ? cv > bv + 1e-9 : cv < bv - 1e-9 }
            return VerdictComparison(
                metric: metric, baseline: bv, current: cv, better: better, worse: worse,
                changed: bv != cv)
        }

        var checks: [RegressionCheck] = []
        let ruleName: String
        let ruleText: [String]
        if let regression = c.profileRegression, !regression.isEmpty {
            ruleName = "profile"
            ruleText = regression
            let baselineMetrics = derivedMetrics(b.summary)
            let currentMetrics = derivedMetrics(c.summary)
            for expression in regression {
                do {
                    checks.append(
                        try RegressionRule(expression).evaluate(baseline: baselineMetrics, current: currentMetrics))
                } catch {
                    checks.append(
                        RegressionCheck(
                            name: expression, metric: "", baseline: nil, current: nil, limit: nil, passed: false,
                            message: "\(error)"))
                }
            }
        } else {
            ruleName = "default"
            ruleText = rules.description
            for endpoint in endpoints {
                for l in endpoint.latency {
                    checks.append(
                        RegressionCheck(
                            name: "\(endpoint.endpoint).\(l.kind)_latency",
                            metric: "\(endpoint.endpoint).\(l.kind)_latency.p95",
                            baseline: l.p95.baseline, current: l.p95.current, limit: nil, passed: !l.regressed,
                            message: l.regressed ? l.reason : nil))
                }
            }
            for j in journeys {
                let d = j.duration
                checks.append(
                    RegressionCheck(
                        name: "journey.\(j.name).duration", metric: "journey.\(j.name).duration.p95",
                        baseline: d.p95.baseline, current: d.p95.current, limit: nil, passed: !d.regressed,
                        message: d.regressed ? d.reason : nil))
            }
            for v in verdicts where v.baseline != nil || v.current != nil {
                checks.append(
                    RegressionCheck(
                        name: v.metric, metric: v.metric, baseline: v.baseline, current: v.current, limit: nil,
                        passed: !v.worse,
                        message: v.worse
                            ? "\(v.metric) got worse: \(format(v.baseline)) → \(format(v.current))" : nil))
            }
        }
        let lag = Delta(b.summary.journeys.startLag.p99, c.summary.journeys.startLag.p99)
        let busier =
            lag.current > lag.baseline * rules.busierStartLagFactor
            && lag.absolute > rules.busierStartLagSeconds
        var notes = notes
        var inconclusive = false
        if busier {
            notes.append(
                "the machine was busier during the current run: the soak process's own start lag p99 went "
                    + "\(formatSeconds(lag.baseline)) → \(formatSeconds(lag.current)); latency differences may be the machine's"
            )
            if ruleName == "default" {
                for (i, check) in checks.enumerated()
                where !check.passed && (check.name.hasSuffix("_latency") || check.name.hasSuffix(".duration")) {
                    checks[i].passed = true
                    checks[i].inconclusive = true
                    checks[i].message = "inconclusive (machine busier): " + (check.message ?? "")
                    inconclusive = true
                }
            }
        }
        return SoakComparison(
            baseline: reference(b), current: reference(c), rule: ruleName, ruleText: ruleText, settings: rules,
            forced: forced, notes: notes, endpoints: endpoints, journeys: journeys, verdicts: verdicts, checks: checks,
            regressed: checks.contains { !$0.passed }, startLagP99: lag, machineBusier: busier,
            inconclusive: inconclusive)
    }

    /// 5xx answers plus attempts without a response.
    static func failedAttempts(_ e: SoakSummary.EndpointSummary) -> Int {
        // Saturating: a hand-edited summary's counts near Int.max must not trap the comparison.
        e.byStatus.filter { Int($0.key).map { $0 >= 500 } ?? true }.values.reduce(0) { sum, count in
            let (total, overflow) = sum.addingReportingOverflow(count)
            return overflow ? Int.max : total
        }
    }

    /// The summary's metrics plus per-endpoint rates rules may use: `<endpoint>.429.rate`,
    /// `<endpoint>.errors.rate` (per attempt).
    static func derivedMetrics(_ s: SoakSummary) -> [String: Double] {
        var metrics = s.metrics
        for (name, e) in s.endpoints where e.attempts > 0 {
            metrics["\(name).429.rate"] =
                metrics["\(name).429.rate"] ?? Double(e.byStatus["429"] ?? 0) / Double(e.attempts)
            metrics["\(name).errors.rate"] =
                metrics["\(name).errors.rate"] ?? Double(failedAttempts(e)) / Double(e.attempts)
        }
        return metrics
    }

    static func latencyComparison(
        kind: String, baseline: HistogramSummary?, current: HistogramSummary?, rules: RegressionRules
    ) -> LatencyComparison {
        let pairs = [\HistogramSummary.p50, \.p95, \.p99].map { path in
            Delta(baseline?[keyPath: path] ?? 0, current?[keyPath: path] ?? 0)
        }
        var result = LatencyComparison(
            kind: kind, p50: pairs[0], p95: pairs[1], p99: pairs[2], test: nil, regressed: false, reason: "")
        guard let baseline, let current, baseline.count >= UInt64(rules.minSamples),
            current.count >= UInt64(rules.minSamples)
        else {
            result.reason = "not tested: fewer than \(rules.minSamples) samples in a run"
            return result
        }
        result.test = MannWhitneyU.test(baseline: baseline, current: current)
        return result
    }

    /// Applies the default rule to every tested latency: significance by Holm's step-down
    /// procedure over all of the comparison's tests (family-wise error ≤ `alpha`, however many
    /// endpoints there are), then the relative and absolute effect-size floors.
    static func judgeLatency(_ groups: inout [[LatencyComparison]], rules: RegressionRules) {
        var tested: [(endpoint: Int, latency: Int, p: Double)] = []
        for (i, group) in groups.enumerated() {
            for (j, l) in group.enumerated() {
                if let test = l.test { tested.append((i, j, test.pGreater)) }
            }
        }
        tested.sort { $0.p < $1.p }
        var significant = Set<[Int]>()
        for (rank, t) in tested.enumerated() {
            guard t.p < rules.alpha / Double(tested.count - rank) else { break }
            significant.insert([t.endpoint, t.latency])
        }
        for (i, j, pValue) in tested {
            var l = groups[i][j]
            let grown = [("p50", l.p50), ("p95", l.p95), ("p99", l.p99)].filter { _, d in
                d.absolute > rules.minAbsoluteSeconds && (d.relative ?? .infinity) > rules.minRelative
            }
            let isSignificant = significant.contains([i, j])
            l.regressed = isSignificant && !grown.isEmpty
            let p = String(format: "p = %.2g", pValue)
            if l.regressed {
                let what = grown.map { name, d in
                    "\(name) \(formatSeconds(d.baseline)) → \(formatSeconds(d.current)) "
                        + "(+\(formatSeconds(d.absolute)), +\(String(format: "%.0f", (d.relative ?? 0) * 100))%)"
                }.joined(separator: ", ")
                l.reason = "slower (\(p), significant among \(tested.count) tests): \(what)"
            } else if isSignificant {
                l.reason = "significantly slower (\(p)) but below the effect-size floor"
            } else {
                l.reason =
                    "no significant slowdown (\(p); \(tested.count) tests, Holm at \(ThresholdResult.format(rules.alpha)))"
            }
            groups[i][j] = l
        }
    }

    package static func reference(_ r: SoakReportDirectory) -> RunReference {
        RunReference(
            directory: r.url.path, runId: r.summary.run.runId, profile: r.summary.run.profile,
            profileHash: r.summary.run.profileHash, startedAt: r.summary.run.startedAt,
            durationSeconds: r.summary.run.durationSeconds)
    }

    package static func format(_ value: Double?) -> String {
        value.map { ThresholdResult.format($0, significant: 4) } ?? "–"
    }

    /// `0.0123` → `12.3ms`, `1.5` → `1.5s`.
    package static func formatSeconds(_ value: Double) -> String {
        abs(value) < 1 ? String(format: "%.1fms", value * 1000) : String(format: "%.3gs", value)
    }
}
