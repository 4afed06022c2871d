import Foundation
import SoakRecords

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
        /// Mann–Whitney U over every request of both runs: reported, not deciding (requests of one
        /// run share the machine's state, so on hundreds of them any wobble is "significant").
        /// `nil` when either run had fewer than 20 values.
        package var test: MannWhitneyU?
        /// The deciding statistic: each block's p50 and p95 compared over blocks (see ``BlockShift``);
        /// empty when a run has too few blocks or no per-request rows.
        package var blocks: [BlockShift] = []
        /// The block quantile the reason cites (the flagged one, else the largest shift), when tested.
        package var cited: BlockShift?
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
    /// Both runs' load generator health.
    package var baselineHealth: GeneratorHealth?
    package var currentHealth: GeneratorHealth?
    /// A latency shift was flagged while the machine was busier or a generator unhealthy: the
    /// comparison cannot tell the code from the machine (exit code 2 unless something else regressed).
    package var inconclusive: Bool
    /// Why the comparison is inconclusive, in words; empty otherwise.
    package var inconclusiveReasons: [String] = []
    /// Both runs' machine load and generator CPU per attempt.
    package var machine: MachineComparison? = nil

    /// The process's exit code for this comparison: 1 regression, 2 inconclusive, 0 otherwise.
    package var exitCode: Int32 { regressed ? 1 : inconclusive ? 2 : 0 }

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
        var endpoints = endpointComparisons(b, c, rules: rules)
        let journeys = journeyComparisons(b.summary, c.summary, rules: rules)
        // One family for Holm's procedure: every endpoint's block tests.
        var groups = endpoints.map(\.latency)
        judgeLatency(&groups, rules: rules)
        for i in endpoints.indices { endpoints[i].latency = groups[i] }
        let verdicts = verdictComparisons(b.summary, c.summary)
        var comparison = SoakComparison(
            baseline: reference(b), current: reference(c), rule: "default", ruleText: rules.description,
            settings: rules, forced: forced, notes: notes, endpoints: endpoints, journeys: journeys, verdicts: verdicts,
            checks: [], regressed: false,
            startLagP99: Delta(b.summary.journeys.startLag.p99, c.summary.journeys.startLag.p99), machineBusier: false,
            baselineHealth: GeneratorHealth.of(b.summary, rules: rules),
            currentHealth: GeneratorHealth.of(c.summary, rules: rules), inconclusive: false,
            machine: MachineComparison(baseline: b.summary, current: c.summary))
        if let regression = c.profileRegression, !regression.isEmpty {
            comparison.rule = "profile"
            comparison.ruleText = regression
            comparison.checks = profileChecks(regression, baseline: b.summary, current: c.summary)
        } else {
            comparison.checks = comparison.defaultChecks()
        }
        if b.samples == nil || c.samples == nil {
            comparison.notes.append(
                "the \(b.samples == nil ? "baseline" : "current") report has no readable attempts.csv, so its "
                    + "latencies could not be cut into blocks and are not judged")
        }
        comparison.judgeMachine(rules: rules)
        comparison.regressed = comparison.checks.contains { !$0.passed }
        return comparison
    }

    /// Per endpoint: counts, rates and both latencies.
    static func endpointComparisons(
        _ b: SoakReportDirectory, _ c: SoakReportDirectory, rules: RegressionRules
    ) -> [EndpointComparison] {
        Set(b.summary.endpoints.keys).union(c.summary.endpoints.keys).sorted().map { name in
            let be = b.summary.endpoints[name]
            let ce = c.summary.endpoints[name]
            func rate(_ e: SoakSummary.EndpointSummary?, _ count: (SoakSummary.EndpointSummary) -> Int) -> Double {
                guard let e, e.attempts > 0 else { return 0 }
                return Double(count(e)) / Double(e.attempts)
            }
            let latency = ["attempt", "call"].map { kind in
                let key = LatencySamples.key(endpoint: name, kind: kind)
                return latencyComparison(
                    kind: kind, baseline: be.map { kind == "attempt" ? $0.attemptLatency : $0.callLatency },
                    current: ce.map { kind == "attempt" ? $0.attemptLatency : $0.callLatency },
                    blocks: blockShifts(key, baseline: b.samples, current: c.samples, rules: rules), rules: rules)
            }
            return EndpointComparison(
                endpoint: name, attempts: Delta(Double(be?.attempts ?? 0), Double(ce?.attempts ?? 0)),
                calls: Delta(Double(be?.calls ?? 0), Double(ce?.calls ?? 0)),
                rate429: Delta(rate(be) { $0.byStatus["429"] ?? 0 }, rate(ce) { $0.byStatus["429"] ?? 0 }),
                failedRate: Delta(rate(be, failedAttempts), rate(ce, failedAttempts)), latency: latency)
        }
    }

    /// Per journey: how many started and were cut short, and its duration (reported, not judged:
    /// the report holds no per-interval journey durations to estimate their spread from).
    static func journeyComparisons(_ b: SoakSummary, _ c: SoakSummary, rules: RegressionRules) -> [JourneyComparison] {
        let bj = b.journeys
        let cj = c.journeys
        return Set(bj.durationFromIntended.keys).union(cj.durationFromIntended.keys).sorted().map { name in
            var duration = latencyComparison(
                kind: "journey", baseline: bj.durationFromIntended[name], current: cj.durationFromIntended[name],
                blocks: [], rules: rules)
            duration.reason =
                "reported, not judged: the report has no per-interval journey durations "
                + "(gate them with an expect.regression rule)"
            return JourneyComparison(
                name: name, started: Delta(Double(bj.byName[name] ?? 0), Double(cj.byName[name] ?? 0)),
                unfinished: Delta(Double(bj.unfinishedByName[name] ?? 0), Double(cj.unfinishedByName[name] ?? 0)),
                duration: duration)
        }
    }

    /// Every verdict metric in both runs and whether it moved the wrong way.
    static func verdictComparisons(_ b: SoakSummary, _ c: SoakSummary) -> [VerdictComparison] {
        var metricNames = verdictMetrics
        let methods = Set(b.metrics.keys).union(c.metrics.keys)
            .filter { $0.hasPrefix("attribution.method.") && $0.hasSuffix(".correct_rate") }.sorted()
        metricNames += methods.map { ($0, "higher") }
        return metricNames.map { metric, better in
            let bv = b.metrics[metric]
            let cv = c.metrics[metric]
            var worse = false
            if let bv, let cv { worse = better == "lower" ? cv > bv + 1e-9 : cv < bv - 1e-9 }
            return VerdictComparison(
                metric: metric, baseline: bv, current: cv, better: better, worse: worse, changed: bv != cv)
        }
    }

    /// The profile's `expect.regression` rules evaluated on both runs' metrics.
    static func profileChecks(_ regression: [String], baseline: SoakSummary, current: SoakSummary) -> [RegressionCheck]
    {
        let baselineMetrics = derivedMetrics(baseline)
        let currentMetrics = derivedMetrics(current)
        return regression.map { expression in
            do {
                return try RegressionRule(expression).evaluate(baseline: baselineMetrics, current: currentMetrics)
            } catch {
                return RegressionCheck(
                    name: expression, metric: "", baseline: nil, current: nil, limit: nil, passed: false,
                    message: "\(error)")
            }
        }
    }

    /// The default rule's checks: every endpoint latency (its cited block quantile), every
    /// journey duration (reported, always passing) and every verdict metric.
    func defaultChecks() -> [RegressionCheck] {
        var checks: [RegressionCheck] = []
        for endpoint in endpoints {
            for l in endpoint.latency {
                let quantile = l.cited?.quantile ?? "p50"
                checks.append(
                    RegressionCheck(
                        name: "\(endpoint.endpoint).\(l.kind)_latency",
                        metric: "\(endpoint.endpoint).\(l.kind)_latency.\(quantile)",
                        baseline: l.cited?.baseline ?? l.p50.baseline, current: l.cited?.current ?? l.p50.current,
                        limit: nil, passed: !l.regressed, message: l.regressed ? l.reason : nil))
            }
        }
        for j in journeys {
            checks.append(
                RegressionCheck(
                    name: "journey.\(j.name).duration", metric: "journey.\(j.name).duration.p50",
                    baseline: j.duration.p50.baseline, current: j.duration.p50.current, limit: nil, passed: true,
                    message: nil))
        }
        for v in verdicts where v.baseline != nil || v.current != nil {
            checks.append(
                RegressionCheck(
                    name: v.metric, metric: v.metric, baseline: v.baseline, current: v.current, limit: nil,
                    passed: !v.worse,
                    message: v.worse
                        ? "\(v.metric) got worse: \(Self.format(v.baseline)) → \(Self.format(v.current))" : nil))
        }
        return checks
    }

    /// Turns flagged latency checks into inconclusive ones when the load generator of either run
    /// was unhealthy or the current run's machine was clearly busier; verdicts still regress.
    mutating func judgeMachine(rules: RegressionRules) {
        let lag = startLagP99
        machineBusier =
            lag.current > lag.baseline * rules.busierStartLagFactor && lag.absolute > rules.busierStartLagSeconds
        var reasons: [String] = []
        if machineBusier {
            reasons.append(
                "the machine was busier during the current run: the soak process's own start lag p99 went "
                    + "\(Self.formatSeconds(lag.baseline)) → \(Self.formatSeconds(lag.current))")
        }
        let evidence = machine?.busierReasons(rules: rules) ?? []
        if !evidence.isEmpty {
            machineBusier = true
            reasons += evidence.map { "the machine was busier during the current run: " + $0 }
        }
        for (side, health) in [("baseline", baselineHealth), ("current", currentHealth)] {
            guard let health, !health.healthy else { continue }
            reasons.append(
                "the \(side) run's load generator fell behind its plan: " + health.problems.joined(separator: ", "))
        }
        notes += reasons.map { $0 + "; latency differences may be the machine's" }
        guard !reasons.isEmpty, rule == "default" else { return }
        for (i, check) in checks.enumerated() where !check.passed && check.name.hasSuffix("_latency") {
            checks[i].passed = true
            checks[i].inconclusive = true
            checks[i].message = "inconclusive (\(reasons.joined(separator: "; "))): " + (check.message ?? "")
            inconclusive = true
        }
        if inconclusive { inconclusiveReasons = reasons }
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

    package static func reference(_ r: SoakReportDirectory) -> RunReference {
        RunReference(
            directory: r.url.path, runId: r.summary.run.runId, profile: r.summary.run.profile,
            profileHash: r.summary.run.profileHash, startedAt: r.summary.run.startedAt,
            durationSeconds: r.summary.run.durationSeconds)
    }

    package static func format(_ value: Double?) -> String {
        value.map { ThresholdResult.format($0, significant: 4) } ?? "–"
    }

    /// A check's value with its unit: latencies and durations (seconds in the metrics) as `12.3ms`,
    /// counts and rates as plain numbers.
    package static func format(_ value: Double?, of check: RegressionCheck) -> String {
        let timed = check.metric.contains("latency") || check.metric.contains(".duration")
        return timed ? value.map(formatSeconds) ?? "–" : format(value)
    }

    /// `0.0123` → `12.3ms`, `1.5` → `1.5s`.
    package static func formatSeconds(_ value: Double) -> String {
        abs(value) < 1 ? String(format: "%.1fms", value * 1000) : String(format: "%.3gs", value)
    }
}
