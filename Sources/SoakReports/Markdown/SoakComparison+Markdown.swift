import Foundation
import SoakRecords
import SoakVerdicts

extension SoakComparison {
    /// `compare.md`: a summary to paste into a pull request (GitHub-flavoured Markdown tables).
    package func markdown() -> String {
        var out = "## optolink-soak compare · \(current.profile) — "
        out += regressed ? "❌ regression\n\n" : inconclusive ? "⚠️ inconclusive\n\n" : "✅ no regression\n\n"
        out += "`\(resultLine)`\n\n"
        out +=
            "Baseline `\(baseline.runId)` (\(baseline.startedAt)) → current `\(current.runId)` (\(current.startedAt)).\n\n"
        if forced { out += "> **Forced:** the two runs' profiles differ; compared anyway (`--force`).\n\n" }
        out += "Machine check — the soak process's own start lag p99: \(Self.latency(startLagP99))"
        out += machineBusier ? " (**busier**: latency shifts are inconclusive).\n\n" : ".\n\n"
        if let machine, let line = machine.line { out += "Machine load — \(line).\n\n" }
        for reason in inconclusiveReasons { out += "> **Inconclusive:** \(reason).\n\n" }
        out +=
            rule == "default"
            ? "Default rule (no `expect.regression` in the profile):\n" : "Rules from `expect.regression`:\n"
        for line in ruleText { out += "- \(rule == "default" ? line : "`\(line)`")\n" }
        out += "\n"
        let failed = checks.filter { !$0.passed || $0.inconclusive == true }
        if !failed.isEmpty {
            out += regressed ? "### Regressions\n\n" : "### Inconclusive\n\n"
            for check in failed { out += "- **\(check.name)**: \(check.message ?? describe(check))\n" }
            out += "\n"
        }
        if rule == "profile" {
            out += "| rule | baseline | current | limit | result |\n|---|---:|---:|---:|---|\n"
            for check in checks {
                out += "| `\(check.name)` | \(Self.format(check.baseline, of: check)) | "
                out += "\(Self.format(check.current, of: check)) | "
                out += "\(Self.format(check.limit, of: check)) | \(check.passed ? "pass" : "**FAIL**") |\n"
            }
            out += "\n"
        }
        out += endpointTable()
        if !journeys.isEmpty {
            out += "\n### Journeys (duration from the intended start, completed journeys; reported, not judged)\n\n"
            out += "| journey | started | unfinished | p50 | p95 | p99 |\n|---|---:|---:|---:|---:|---:|\n"
            for j in journeys {
                let d = j.duration
                out +=
                    "| \(j.name) | \(Self.count(j.started)) | \(Self.count(j.unfinished)) | \(Self.latency(d.p50)) | "
                out += "\(Self.latency(d.p95)) | \(Self.latency(d.p99)) |\n"
            }
        }
        out += "\n### Verdicts\n\n"
        let changed = verdicts.filter(\.changed)
        if changed.isEmpty {
            out += "No verdict count changed.\n"
        } else {
            out += "| metric | baseline | current | |\n|---|---:|---:|---|\n"
            for v in changed {
                out += "| `\(v.metric)` | \(Self.format(v.baseline)) | \(Self.format(v.current)) | "
                out += "\(v.worse ? "**worse**" : "better") |\n"
            }
        }
        if !notes.isEmpty {
            out += "\n### Notes\n\n"
            for note in notes { out += "- \(note)\n" }
        }
        return out
    }

    private func describe(_ check: RegressionCheck) -> String {
        "observed \(Self.format(check.current, of: check)) (baseline \(Self.format(check.baseline, of: check)), "
            + "limit \(Self.format(check.limit, of: check)))"
    }

    /// Per endpoint and latency: the block quantiles the rule judges (the medians over blocks of each
    /// block's p50 and p95), the cited shift with its interval and test, and the whole run's p99.
    private func endpointTable() -> String {
        var out = "### Endpoints\n\n"
        out += "| endpoint | attempts | 429 rate | failed rate | latency | p50 of blocks | p95 of blocks "
        out += "| shift (95 % CI) | block test | all requests p99 |\n"
        out += "|---|---:|---:|---:|---|---:|---:|---|---|---:|\n"
        for e in endpoints {
            for (index, l) in e.latency.enumerated() {
                out +=
                    index == 0
                    ? "| \(e.endpoint) | \(Self.count(e.attempts)) | \(Self.percent(e.rate429)) | \(Self.percent(e.failedRate)) "
                    : "| | | | "
                let blocks = Self.blockQuantiles.map { name, _ in
                    l.blocks.first { $0.quantile == name }.map { Self.latency(Delta($0.baseline, $0.current)) } ?? "n/a"
                }
                let shift = l.cited.map {
                    "\($0.quantile) \(Self.signed($0.shift)) (\(Self.signed($0.shiftLow)) … \(Self.signed($0.shiftHigh)))"
                }
                let test = l.cited.map {
                    String(format: "p = %.2g%@", $0.pGreater, l.regressed ? " **slower**" : "")
                }
                out += "| \(l.kind) | \(blocks[0]) | \(blocks[1]) | \(shift ?? "not tested") | \(test ?? "n/a") "
                out += "| \(Self.latency(l.p99)) |\n"
            }
        }
        if let block = endpoints.lazy.flatMap(\.latency).compactMap(\.cited).first {
            out +=
                "\nEach \(ThresholdResult.format(block.blockSeconds)) s block's quantile is one observation; "
                + "the columns are the medians over the quietest \(ThresholdResult.format(settings.quietBlockFraction * 100))% "
                + "of each run's blocks, which the rule compares.\n"
        }
        return out
    }

    /// `result: regression (exit 1)`: the outcome and the exit code `compare` ends with.
    package var resultLine: String {
        "result: \(regressed ? "regression" : inconclusive ? "inconclusive" : "no regression") (exit \(exitCode))"
    }

    package static func count(_ d: Delta) -> String {
        "\(SVGChart.plain(d.baseline)) → \(SVGChart.plain(d.current))"
    }

    static func percent(_ d: Delta) -> String {
        d.baseline == 0 && d.current == 0
            ? "0" : String(format: "%.2f%% → %.2f%%", d.baseline * 100, d.current * 100)
    }

    package static func latency(_ d: Delta) -> String {
        let relative = d.relative.map { String(format: " (%+.0f%%)", $0 * 100) } ?? ""
        return "\(formatSeconds(d.baseline)) → \(formatSeconds(d.current))\(relative)"
    }

    /// One line per failed check, for the console.
    package var consoleLines: [String] {
        var lines = ["compare: baseline \(baseline.runId) → current \(current.runId) (\(current.profile))"]
        if forced { lines.append("note: the profiles differ; compared anyway (--force)") }
        lines.append(
            rule == "default" ? "default rule (no expect.regression in the profile):" : "rules (expect.regression):")
        lines += ruleText.map { "  \($0)" }
        for check in checks where rule == "profile" || !check.passed || check.inconclusive == true {
            lines.append(
                "\(check.inconclusive == true ? "INCONCLUSIVE" : check.passed ? "PASS" : "FAIL") \(check.name)"
                    + (check.message.map { ": \($0)" }
                        ?? " (baseline \(Self.format(check.baseline, of: check)), current "
                        + "\(Self.format(check.current, of: check)))"))
        }
        lines += notes.map { "note: \($0)" }
        lines += inconclusiveReasons.map { "inconclusive: \($0)" }
        lines.append(resultLine)
        return lines
    }
}

extension JUnitReport {
    /// The JUnit file of a comparison: one case per regression check.
    package static func compare(_ comparison: SoakComparison) -> JUnitReport {
        let cases = comparison.checks.map { check in
            TestCase(
                name: check.name, className: "optolink-soak.regression",
                result: check.passed ? .passed : .failed(message: check.message ?? "regression", detail: nil),
                output:
                    "baseline \(SoakComparison.format(check.baseline, of: check)), current "
                    + "\(SoakComparison.format(check.current, of: check))"
            )
        }
        return JUnitReport(
            name: "optolink-soak compare \(comparison.current.profile)",
            suites: [
                Suite(
                    name: "regression", cases: cases,
                    properties: [
                        ("baseline", comparison.baseline.runId), ("current", comparison.current.runId),
                        ("rule", comparison.rule), ("forced", String(comparison.forced)),
                    ])
            ])
    }
}
