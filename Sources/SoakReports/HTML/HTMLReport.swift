import Foundation
import SoakRecords
import SoakVerdicts

/// `report.html`: one self-contained page per report directory — inline SVG charts, inline CSS
/// and a few lines of inline script (legend clicks hide a series), no network access (a
/// Content-Security-Policy forbids any), no external script or font.
///
/// One run: its plots and tables. A comparison: baseline (dashed, faded) and current overlaid,
/// plus the comparison's checks. Key numbers carry `data-run`, `data-key` (the `summary.json`
/// path) and `data-value` (the exact number), so a test can check the page against the summary.
package enum HTMLReport {
    static let colors = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#475569"]

    /// The page of one run.
    package static func run(
        _ summary: SoakSummary, attempts: [AttemptRecord]?, backoff: BackoffTolerances = BackoffTolerances()
    ) -> String {
        let series = ReportSeries(label: "run", summary: summary, attempts: attempts, backoff: backoff)
        let title = "optolink-soak · \(summary.run.profile) · run \(summary.run.runId)"
        // The run's result, as summary.txt's first line words it (an interrupted run whose
        // thresholds passed is not a pass); a summary from before `result` was written falls
        // back to its thresholds.
        let passed: Bool
        let outcome: String
        if let result = summary.result {
            passed = result == .passed
            outcome = SummaryText.resultLine(result, summary)
        } else {
            passed = summary.thresholds.allSatisfy(\.passed)
            outcome = passed ? "every threshold passed" : "a threshold failed"
        }
        var body = "<header><h1>\(e(title))</h1><p class=\"meta\">\(e(meta(summary)))</p>"
        body += "<p class=\"outcome \(passed ? "pass" : "fail")\" data-key=\"outcome\">"
        body += e(outcome)
        body += "</p>" + firstScreen(summary) + "</header>"
        body += kpis([series])
        body += charts([series])
        body += "<section><h2>Thresholds</h2>\(thresholdTable(summary, run: "run"))</section>"
        body += "<section><h2>Verdicts</h2>\(verdictTable(summary))</section>"
        body += "<section><h2>Endpoints</h2>\(endpointTable(summary, run: "run"))</section>"
        body += "<section><h2>Journeys</h2>\(journeyTable(summary, run: "run"))</section>"
        if !summary.notes.isEmpty {
            body +=
                "<section><h2>Notes</h2><ul>" + summary.notes.map { "<li>\(e($0))</li>" }.joined() + "</ul></section>"
        }
        return page(title: title, body: body)
    }

    /// The page of a comparison: both runs overlaid (baseline dashed), the checks that decided.
    package static func compare(
        _ comparison: SoakComparison, baseline: SoakSummary, baselineAttempts: [AttemptRecord]?,
        current: SoakSummary, currentAttempts: [AttemptRecord]?
    ) -> String {
        let runs = [
            ReportSeries(label: "baseline", summary: baseline, attempts: baselineAttempts),
            ReportSeries(label: "current", summary: current, attempts: currentAttempts),
        ]
        let title = "optolink-soak compare · \(current.run.profile) · \(baseline.run.runId) → \(current.run.runId)"
        var body = "<header><h1>\(e(title))</h1>"
        body += "<p class=\"meta\">baseline: \(e(meta(baseline)))<br>current: \(e(meta(current)))</p>"
        body +=
            "<p class=\"outcome \(comparison.regressed || comparison.inconclusive ? "fail" : "pass")\" data-key=\"outcome\">"
        body += e(comparison.resultLine)
        body += "</p>" + comparison.inconclusiveReasons.map { "<p class=\"note\">\(e($0))</p>" }.joined()
        body += "</header>"
        if comparison.forced || !comparison.notes.isEmpty {
            body += "<section><ul class=\"notes\">" + comparison.notes.map { "<li>\(e($0))</li>" }.joined()
            body += "</ul></section>"
        }
        body += "<section><h2>\(comparison.rule == "default" ? "Default rule" : "Rules (expect.regression)")</h2><ul>"
        body += comparison.ruleText.map { "<li>\(e($0))</li>" }.joined() + "</ul>"
        body += checksTable(comparison) + "</section>"
        body += "<section><h2>Endpoints: baseline → current</h2>\(comparisonTable(comparison))</section>"
        if !comparison.journeys.isEmpty {
            body += "<section><h2>Journeys: baseline → current</h2><table><tr><th>journey</th><th>started</th>"
            body += "<th>unfinished</th><th>p50</th><th>p95</th><th>p99</th><th>judged</th></tr>"
            for j in comparison.journeys {
                let d = j.duration
                body += "<tr class=\"\(d.regressed ? "fail" : "")\"><td>\(e(j.name))</td>"
                body +=
                    "<td>\(e(SoakComparison.count(j.started)))</td><td>\(e(SoakComparison.count(j.unfinished)))</td>"
                body += "<td>\(e(SoakComparison.latency(d.p50)))</td><td>\(e(SoakComparison.latency(d.p95)))</td>"
                body += "<td>\(e(SoakComparison.latency(d.p99)))</td>"
                body += "<td>\(e(d.reason))</td></tr>"
            }
            body += "</table></section>"
        }
        body += kpis(runs)
        body += charts(runs)
        for (label, summary) in [("baseline", baseline), ("current", current)] {
            body += "<section><h2>Endpoints (\(label))</h2>\(endpointTable(summary, run: label))</section>"
        }
        body += "<section><h2>Verdicts (current)</h2>\(verdictTable(current))</section>"
        body += "<section><h2>Thresholds (current)</h2>\(thresholdTable(current, run: "current"))</section>"
        return page(title: title, body: body)
    }

    // MARK: Parts

    package static func e(_ text: String) -> String { MarkupEscaping.escape(text) }

    package static func meta(_ s: SoakSummary) -> String {
        "\(s.run.startedAt) · \(s.run.backend) \(s.run.baseURL) · \(s.run.loadModel) model · \(s.run.devices) devices · "
            + String(format: "%.1f s", s.run.durationSeconds)
            + " · stop: \(s.run.stopReason.rawValue) · seed \(s.run.seed)"
    }

    /// A number with its summary path, for the browser test.
    package static func number(_ value: Double, run: String, key: String, text: String? = nil) -> String {
        let exact = value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
        return "<span class=\"num\" data-run=\"\(run)\" data-key=\"\(e(key))\" data-value=\"\(exact)\">"
            + e(text ?? grouped(value)) + "</span>"
    }

    package static func grouped(_ value: Double) -> String {
        guard value == value.rounded(), abs(value) < 1e15 else { return String(format: "%.4g", value) }
        let digits = String(Int64(abs(value)))
        var out = ""
        for (i, c) in digits.reversed().enumerated() {
            if i > 0 && i % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (value < 0 ? "-" : "") + String(out.reversed())
    }

    static func kpis(_ runs: [ReportSeries]) -> String {
        var out = "<section><h2>Key numbers</h2><table class=\"kpi\"><tr><th></th>"
        out += runs.map { "<th>\(e($0.label))</th>" }.joined() + "</tr>"
        let rows: [(String, String, (SoakSummary) -> Double)] = [
            ("attempts", "totals.attempts", { Double($0.totals.attempts) }),
            ("calls", "totals.calls", { Double($0.totals.calls) }),
            ("429s", "totals.status429", { Double($0.totals.status429) }),
            ("errors (5xx, no response)", "totals.errors", { Double($0.totals.errors) }),
            ("journeys started", "journeys.started", { Double($0.journeys.started) }),
            ("journeys completed", "journeys.completed", { Double($0.journeys.completed) }),
            ("journeys unfinished", "journeys.unfinished", { Double($0.journeys.unfinished) }),
            ("late starts", "journeys.lateStarts", { Double($0.journeys.lateStarts) }),
            ("journeys dropped (never started)", "journeys.dropped", { Double($0.journeys.dropped ?? 0) }),
        ]
        for (label, key, value) in rows {
            out += "<tr><td>\(e(label))</td>"
            out += runs.map { "<td>\(number(value($0.summary), run: $0.label, key: key))</td>" }.joined() + "</tr>"
        }
        out += "<tr><td>start lag p99</td>"
        out += runs.map { r in
            let v = r.summary.journeys.startLag.p99
            return "<td>\(number(v, run: r.label, key: "journeys.startLag.p99", text: SVGChart.seconds(v)))</td>"
        }.joined()
        out += "</tr><tr><td>RSS peak</td>"
        out += runs.map { r in
            let peak = Double(r.summary.rss.map(\.bytes).max() ?? 0)
            return "<td>" + String(format: "%.1f MB", peak / 1_048_576) + "</td>"
        }.joined()
        return out + "</tr></table></section>"
    }

    /// Series of each run: the current (or only) run solid, the baseline dashed.
    static func overlay(
        _ runs: [ReportSeries], _ name: String, color: String, _ points: (ReportSeries) -> [(x: Double, y: Double)],
        style: SVGChart.Style = .line
    )
        -> [SVGChart.Series]
    {
        runs.map { r in
            SVGChart.Series(
                name: runs.count > 1 ? "\(name) (\(r.label))" : name, color: color, style: style,
                dashed: r.label == "baseline", points: points(r))
        }
    }

    /// The x domain every time chart of a report shares: seconds since start, 0 … the longest run.
    static func timeDomain(_ runs: [ReportSeries]) -> ClosedRange<Double> {
        0...max(runs.map(\.timeSpan).max() ?? 0, 1)
    }

    /// The chart, or — when it has nothing to draw — one line saying which chart is left out and why.
    static func chartOrNote(_ chart: SVGChart, leftOutBecause why: String) -> String {
        guard !chart.hasData else { return chart.render() }
        return
            "<p class=\"note omitted\" data-omitted=\"\(e(chart.title))\">\(e(chart.title)): left out, \(e(why)).</p>"
    }

    static func charts(_ runs: [ReportSeries]) -> String {
        let time = timeDomain(runs)
        let interval = runs.map { max($0.summary.intervalSeconds, 0.001) }.max() ?? 1
        var out = "<section><h2>Load over time</h2>"
        out += chartOrNote(
            SVGChart(
                title: "Requests, 429s and failures per second", xLabel: "seconds since start", yLabel: "per second",
                series: overlay(runs, "attempts/s", color: colors[0]) { $0.attemptsPerSecond }
                    + overlay(runs, "429/s", color: colors[4]) { $0.status429PerSecond }
                    + overlay(runs, "failures/s", color: colors[1]) { $0.errorsPerSecond },
                xDomain: time, xAxis: .time),
            leftOutBecause: "the summary has no timeline rows")
        out += "</section><section><h2>Latency over time (attempt service time, per endpoint)</h2>"
        let endpoints = Set(runs.flatMap { $0.latency.map(\.endpoint) }).sorted()
        if runs.allSatisfy({ !$0.hasAttempts }) {
            out += "<p class=\"note omitted\">Latency over time: left out, attempts.csv not available.</p>"
        } else if endpoints.isEmpty {
            out += "<p class=\"note omitted\">Latency over time: left out, no attempt got a response.</p>"
        }
        for endpoint in endpoints {
            func pick(_ r: ReportSeries) -> ReportSeries.Latency? { r.latency.first { $0.endpoint == endpoint } }
            // An interval without a response is a gap in the line.
            func gapped(_ series: [SVGChart.Series]) -> [SVGChart.Series] {
                series.map { line in
                    var gapped = line
                    gapped.gapOver = interval * 1.5
                    return gapped
                }
            }
            out += SVGChart(
                title: "/\(endpoint): p50, p95, p99 per interval", xLabel: "seconds since start", yLabel: "latency",
                series: gapped(
                    overlay(runs, "p50", color: colors[2]) { pick($0)?.p50 ?? [] }
                        + overlay(runs, "p95", color: colors[0]) { pick($0)?.p95 ?? [] }
                        + overlay(runs, "p99", color: colors[1]) { pick($0)?.p99 ?? [] }),
                yFormat: SVGChart.seconds, xDomain: time, xAxis: .time, height: 220
            ).render()
        }
        out += "</section><section><h2>Start lag</h2><div class=\"two\">"
        out += chartOrNote(
            SVGChart(
                title: "Start lag distribution (actual − planned start)", xLabel: "start lag",
                yLabel: "share of journeys",
                series: overlay(runs, "journeys started within", color: colors[3]) { $0.startLagCDF },
                yFormat: { String(format: "%.0f%%", $0 * 100) }, xFormat: SVGChart.seconds, width: 560),
            leftOutBecause: "no journey started")
        let anyLate = runs.contains { $0.summary.journeys.lateStarts > 0 }
        out += chartOrNote(
            SVGChart(
                title: "Late starts per second", xLabel: "seconds since start", yLabel: "late starts/s",
                series: anyLate ? overlay(runs, "late starts/s", color: colors[4]) { $0.lateStartsPerSecond } : [],
                xDomain: time, xAxis: .time, width: 560),
            leftOutBecause: "no journey started late")
        out += "</div></section>" + backoffChart(runs) + limitCharts(runs, time: time)
        out += "<section><h2>Memory</h2>"
        out += chartOrNote(
            SVGChart(
                title: "Resident memory of the soak process", xLabel: "seconds since start", yLabel: "MB",
                series: overlay(runs, "RSS MB", color: colors[5]) { $0.rssMB }, xDomain: time, xAxis: .time,
                height: 200),
            leftOutBecause: "no RSS sample was recorded")
        return out + "</section>"
    }

    /// Each judged retry's deviation from the wait it was asked for (ms), early ones red and
    /// late ones orange, one row per asked wait.
    static func backoffChart(_ runs: [ReportSeries]) -> String {
        var out = "<section><h2>Back-off: wait taken minus wait asked, per judged retry</h2>"
        for r in runs {
            let b = r.backoff
            out += "<p class=\"note\">\(runs.count > 1 ? e(r.label) + ": " : "")"
            out += "\(b.judged) retries judged (\(b.afterRetryAfter) after a 429 with Retry-After N): "
            out += "\(b.early.count) early (red), \(b.onTime.count) on time, \(b.late.count) late (orange)"
            out += b.thinned > 0 ? "; \(b.thinned) on-time or late ones thinned out (every early one shown)" : ""
            out += "; \(b.notRetried) 429s with N not retried</p>"
        }
        let all = runs.flatMap { $0.backoff.early + $0.backoff.onTime + $0.backoff.late }.map(\.x).sorted()
        let tolerances = runs.first?.backoff.tolerances ?? BackoffTolerances()
        // Early retries are always inside the axis; from 100 retries on, the latest 1 % may sit
        // past its right end so the millisecond spread of the rest stays readable. The boundaries
        // are drawn where they fall inside the axis and always stated.
        let low = min(all.first ?? 0, -5)
        let latest = all.count >= 100 ? all[Int(Double(all.count - 1) * 0.99)] : all.last ?? 0
        let high = max(latest * 1.05, 5)
        out += "<p class=\"note\">Early: shorter than asked by over "
        out += "\(SVGChart.plain(tolerances.earlySlackSeconds * 1000)) ms; late: longer by over "
        out += "\(SVGChart.plain(tolerances.lateToleranceSeconds * 1000)) ms."
        let past = all.filter { $0 > high }.count
        out += past > 0 ? " \(past) later than \(SVGChart.plain(high)) ms are past the axis.</p>" : "</p>"
        out += chartOrNote(
            SVGChart(
                title: "Each judged retry: wait taken − wait asked (ms); left of the red line is early",
                xLabel: "wait taken − wait asked (ms)", yLabel: "wait asked (s)",
                series: overlay(runs, "on time", color: colors[0], { $0.backoff.onTime }, style: .points)
                    + overlay(runs, "late", color: colors[4], { $0.backoff.late }, style: .points)
                    + overlay(runs, "early", color: colors[1], { $0.backoff.early }, style: .points),
                xDomain: low...high,
                xReferences: [
                    (-tolerances.earlySlackSeconds * 1000, "early"), (tolerances.lateToleranceSeconds * 1000, "late"),
                ], height: 300),
            leftOutBecause: runs.allSatisfy({ !$0.hasAttempts })
                ? "attempts.csv not available" : "no retry was judged (no 429 or error was retried)")
        return out + "</section>"
    }

    /// Per declared bucket: the requests let through in each window against the limit.
    static func limitCharts(_ runs: [ReportSeries], time: ClosedRange<Double>) -> String {
        var out = "<section><h2>Limit windows per bucket: let through vs limit</h2>"
        let buckets = Set(runs.flatMap { $0.limits.map(\.bucket) }).sorted()
        if buckets.isEmpty {
            out += "<p class=\"note omitted\">Limit windows: left out, no limits declared in the profile's "
            out += "expect.limits.</p>"
        }
        for bucket in buckets {
            func pick(_ r: ReportSeries) -> ReportSeries.LimitWindows? { r.limits.first { $0.bucket == bucket } }
            let limit = runs.compactMap { pick($0)?.limit }.first ?? 0
            let description = runs.compactMap { pick($0)?.description }.first ?? ""
            out += chartOrNote(
                SVGChart(
                    title: "\(bucket) (\(description)): requests let through per window",
                    xLabel: "window start, seconds since start", yLabel: "let through",
                    series: overlay(runs, "within limit", color: colors[2], { pick($0)?.within ?? [] }, style: .points)
                        + overlay(runs, "over limit", color: colors[1], { pick($0)?.over ?? [] }, style: .points),
                    xDomain: time, xAxis: .time, references: [(Double(limit), "limit \(limit)")], height: 220),
                leftOutBecause: "no request reached this bucket's endpoints")
        }
        return out + "</section>"
    }

    static func thresholdTable(_ s: SoakSummary, run: String) -> String {
        guard !s.thresholds.isEmpty else { return "<p class=\"note\">No thresholds.</p>" }
        var out = "<table><tr><th>threshold</th><th>observed</th><th>result</th></tr>"
        for (i, t) in s.thresholds.enumerated() {
            let observed =
                t.observed.map {
                    number(
                        $0, run: run, key: "thresholds.\(i).observed", text: Thresholds.display($0, like: t.expression))
                } ?? e(t.message ?? "–")
            out += "<tr class=\"\(t.passed ? "pass" : "fail")\"><td><code>\(e(t.expression))</code></td>"
            out += "<td>\(observed)</td><td>\(t.passed ? "PASS" : "FAIL")</td></tr>"
        }
        return out + "</table>"
    }

    static func verdictTable(_ s: SoakSummary) -> String {
        let checks = VerdictCheck.checks(s)
        guard !checks.isEmpty else { return "<p class=\"note\">No verdicts.</p>" }
        var out = "<table><tr><th>verdict</th><th>result</th><th>detail</th></tr>"
        for c in checks {
            let css = c.status == .failed ? "fail" : c.status == .passed ? "pass" : "skip"
            out +=
                "<tr class=\"\(css)\"><td>\(e(c.name))</td><td>\(e(c.status.rawValue.replacingOccurrences(of: "_", with: " ")))</td>"
            out += "<td>\(e(c.detail))</td></tr>"
        }
        return out + "</table>"
    }

    static func endpointTable(_ s: SoakSummary, run: String) -> String {
        var out = "<table><tr><th>endpoint</th><th>attempts</th><th>calls</th><th>attempt p50</th><th>p95</th>"
        out += "<th>p99</th><th>max</th><th>call p99</th><th>statuses</th></tr>"
        for (name, ep) in s.endpoints.sorted(by: { $0.key < $1.key }) {
            let k = "endpoints.\(name)"
            out += "<tr><td>\(e(name))</td><td>\(number(Double(ep.attempts), run: run, key: "\(k).attempts"))</td>"
            out += "<td>\(number(Double(ep.calls), run: run, key: "\(k).calls"))</td>"
            for (stat, v) in [
                ("p50", ep.attemptLatency.p50), ("p95", ep.attemptLatency.p95), ("p99", ep.attemptLatency.p99),
                ("max", ep.attemptLatency.max),
            ] {
                out += "<td>\(number(v, run: run, key: "\(k).attemptLatency.\(stat)", text: SVGChart.seconds(v)))</td>"
            }
            let callP99 = ep.callLatency.p99
            out += "<td>\(number(callP99, run: run, key: "\(k).callLatency.p99", text: SVGChart.seconds(callP99)))</td>"
            out +=
                "<td>"
                + e(ep.byStatus.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " "))
                + "</td></tr>"
        }
        return out + "</table>"
    }

    static func journeyTable(_ s: SoakSummary, run: String) -> String {
        let j = s.journeys
        guard !j.byName.isEmpty else { return "<p class=\"note\">No journeys started.</p>" }
        var out = "<table><tr><th>journey</th><th>started</th><th>unfinished</th><th>duration p50</th><th>p95</th>"
        out += "<th>p99</th><th>max</th></tr>"
        for name in j.byName.keys.sorted() {
            // A name with a dot cannot be a summary.json path segment; its numbers are shown unmarked.
            let k = name.contains(".") ? nil : "journeys"
            func cell(_ value: Double, _ key: String, _ text: String? = nil) -> String {
                guard let k else { return e(text ?? grouped(value)) }
                return number(value, run: run, key: "\(k).\(key)", text: text)
            }
            out += "<tr><td>\(e(name))</td><td>\(cell(Double(j.byName[name] ?? 0), "byName.\(name)"))</td>"
            out += "<td>\(e(grouped(Double(j.unfinishedByName[name] ?? 0))))</td>"
            if let d = j.durationFromIntended[name] {
                for (stat, v) in [("p50", d.p50), ("p95", d.p95), ("p99", d.p99), ("max", d.max)] {
                    out += "<td>\(cell(v, "durationFromIntended.\(name).\(stat)", SVGChart.seconds(v)))</td>"
                }
            } else {
                out += "<td colspan=\"4\">no completed journey</td>"
            }
            out += "</tr>"
        }
        return out + "</table>"
    }

    /// What the report opens with under the result: the two answers the tool exists for ("limits
    /// enforced by the server", "clients waited as told", as summary.txt words them) and every
    /// failed threshold, before any chart.
    static func firstScreen(_ summary: SoakSummary) -> String {
        var out = ""
        let answers = SummaryText.headline(summary)
        if !answers.isEmpty {
            out +=
                "<ul class=\"answers\" data-key=\"answers\">" + answers.map { "<li>\(e($0))</li>" }.joined() + "</ul>"
        }
        let failed = summary.thresholds.filter { !$0.passed }
        if !failed.isEmpty {
            out += "<p><strong>What failed:</strong></p><ul class=\"failed\" data-key=\"failed\">"
            out += failed.map { "<li><code>\(e($0.expression))</code>: \(e($0.message ?? "failed"))</li>" }.joined()
            out += "</ul>"
        }
        return out
    }

    static func checksTable(_ c: SoakComparison) -> String {
        var out = "<table><tr><th>check</th><th>baseline</th><th>current</th><th>result</th><th>why</th></tr>"
        for check in c.checks {
            out +=
                "<tr class=\"\(check.passed && check.inconclusive != true ? "pass" : "fail")\"><td><code>\(e(check.name))</code></td>"
            let show: (Double?) -> String = { value in
                guard let value else { return "–" }
                return check.metric.contains("latency") ? SVGChart.seconds(value) : SoakComparison.format(value)
            }
            out += "<td>\(e(show(check.baseline)))</td><td>\(e(show(check.current)))</td>"
            let result = check.inconclusive == true ? "inconclusive" : check.passed ? "pass" : "REGRESSION"
            out += "<td>\(result)</td><td>\(e(check.message ?? ""))</td></tr>"
        }
        return out + "</table>"
    }

    static func comparisonTable(_ c: SoakComparison) -> String {
        var out = "<table><tr><th>endpoint</th><th>attempts</th><th>429 rate</th><th>failed rate</th><th>latency</th>"
        out += "<th>p50 of blocks</th><th>p95 of blocks</th><th>all requests p99</th><th>block test</th></tr>"
        for ep in c.endpoints {
            for (i, l) in ep.latency.enumerated() {
                out += "<tr class=\"\(l.regressed ? "fail" : "")\">"
                if i == 0 {
                    let span = " rowspan=\"\(ep.latency.count)\""
                    out += "<td\(span)>\(e(ep.endpoint))</td><td\(span)>\(e(SoakComparison.count(ep.attempts)))</td>"
                    out += "<td\(span)>\(e(SoakComparison.percent(ep.rate429)))</td>"
                    out += "<td\(span)>\(e(SoakComparison.percent(ep.failedRate)))</td>"
                }
                out += "<td>\(e(l.kind))</td>"
                for (name, _) in SoakComparison.blockQuantiles {
                    let block = l.blocks.first { $0.quantile == name }
                    let text = block.map { SoakComparison.latency(.init($0.baseline, $0.current)) } ?? "n/a"
                    out += "<td>\(e(text))</td>"
                }
                out += "<td>\(e(SoakComparison.latency(l.p99)))</td><td>\(e(l.reason))</td></tr>"
            }
        }
        return out + "</table>"
    }

    package static func page(title: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
        <title>\(e(title))</title>
        <style>
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:900px;padding:16px;color:#0f172a;background:#fff}
        h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px;border-bottom:1px solid #e2e8f0}
        .meta{color:#475569;margin:0}.outcome{display:inline-block;padding:2px 10px;border-radius:4px;font-weight:600}
        .outcome.pass{background:#dcfce7;color:#166534}.outcome.fail{background:#fee2e2;color:#991b1b}
        table{border-collapse:collapse;width:100%;font-size:13px}td,th{border-bottom:1px solid #e2e8f0;padding:3px 6px;text-align:left;vertical-align:top}
        tr.fail td{background:#fef2f2}tr.skip td{color:#64748b}.num{font-variant-numeric:tabular-nums}
        .note{color:#475569;font-size:13px}.two{display:flex;gap:8px;flex-wrap:wrap}.two svg{flex:1 1 400px}
        svg.chart{width:100%;height:auto;display:block;margin:6px 0 14px}svg text{font-size:11px;fill:#334155}
        svg .ct{font-size:13px;font-weight:600;fill:#0f172a}svg .axis line{stroke:#94a3b8}svg .grid{stroke:#e2e8f0}
        svg .ref{stroke:#64748b;stroke-dasharray:4 3}svg .lg{cursor:pointer}svg .off{opacity:.15}
        </style></head><body>
        \(body)
        <p class="note">Written by optolink-soak \(SoakVersion.current). Dashed/faded series are the baseline. Click a legend entry to hide its series.</p>
        <script>
        document.querySelectorAll("svg.chart .lg").forEach(function (g) {
          g.addEventListener("click", function () {
            var s = g.closest("svg").querySelector('.series[data-series="' + g.getAttribute("data-series") + '"]');
            if (s) { s.classList.toggle("off"); g.classList.toggle("off"); }
          });
        });
        </script>
        </body></html>

        """
    }
}
