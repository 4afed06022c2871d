import Foundation
import SoakRecords
import SoakVerdicts

/// The short human-readable report (`summary.txt`, also printed at the end of a run).
package enum SummaryText {
    /// `text` with every control character other than line feed and tab shown as `�`: journey
    /// names come from the profile and notes can quote a server, and neither may move a terminal's
    /// cursor or colour a CI log (an escape sequence, a carriage return).
    package static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: Self.isHidden) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { out.append(Self.isHidden(scalar) ? "\u{FFFD}" : scalar) }
        return String(out)
    }

    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\n" && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
    }

    package static func render(_ s: SoakSummary) -> String {
        var lines: [String] = []
        if let result = s.result { lines.append(resultLine(result, s)) }
        lines += runLines(s)
        lines += headline(s)
        lines += journeyLines(s)
        lines.append(
            "requests: \(s.totals.attempts) attempts, \(s.totals.calls) calls, "
                + String(format: "%.0f/s", s.totals.attemptsPerSecond)
                + ", 429s \(s.totals.status429), errors \(s.totals.errors)"
                + ", failed \(Int(s.metrics["http.failed"] ?? 0)) (status or body outside the contract, or no response)"
        )
        lines += endpointTable(s)
        lines += deviceLines(s)
        if let verdicts = s.verdicts {
            // The notes explain the back-off line's counts, so they follow it directly.
            var verdictLines = verdicts.summaryLines()
            verdictLines.insert(contentsOf: s.notes.map { "  note: \($0)" }, at: Swift.min(1, verdictLines.count))
            lines += verdictLines
        } else {
            lines += s.notes.map { "note: \($0)" }
        }
        for t in s.thresholds { lines.append(t.line) }
        return Self.printable(lines.joined(separator: "\n")) + "\n"
    }

    private static func ms(_ seconds: Double) -> String { String(format: "%.1fms", seconds * 1000) }

    /// The tool, profile and run; the backend and load; a shard's slice.
    private static func runLines(_ s: SoakSummary) -> [String] {
        var lines = ["optolink-soak \(s.run.soakVersion) · profile \(s.run.profile) · run \(s.run.runId)"]
        lines.append(
            "backend \(s.run.backend) \(s.run.baseURL)" + (s.run.transport.map { " · transport \($0)" } ?? "")
                + (s.run.tls.map { " · tls \($0)" } ?? "")
                + " · \(s.run.loadModel) model · \(s.run.devices) devices · "
                + String(format: "%.1f s", s.run.durationSeconds) + " · stop: \(s.run.stopReason.rawValue)"
                + (s.run.interrupted && s.run.stopReason == .deadline ? " (after a stop signal)" : ""))
        if let shards = s.run.shards, let index = shards.index, let slice = shards.slice {
            lines.append(
                "shard \(index)/\(shards.count): \(slice.devices) of the plan's \(slice.planDevices) devices, "
                    + "\(slice.journeys) journeys planned, \(Int((slice.loadShare * 100).rounded())) % of the load")
        }
        return lines
    }

    /// Journeys started and finished, dropped arrivals, the generator, and each journey's duration.
    private static func journeyLines(_ s: SoakSummary) -> [String] {
        var lines = [
            "journeys: \(s.journeys.started) started, \(s.journeys.completed) completed, \(s.journeys.unfinished) unfinished, "
                + "\(s.journeys.lateStarts) late starts (start lag p99 \(ms(s.journeys.startLag.p99)))"
                + ((s.journeys.waitedForDevice ?? 0) > 0
                    ? ", \(s.journeys.waitedForDevice ?? 0) waited for a busy device (more concurrency than devices)"
                    : "")
        ]
        lines.append(DroppedArrivalsLine.render(s.journeys, loadModel: s.run.loadModel))
        if !GeneratorLine.isLimit(s) { lines.append(GeneratorLine.render(s)) }
        // Whole journeys, from the intended start (open model: the planned arrival) to the last step's end.
        for name in s.journeys.byName.keys.sorted() {
            let h = s.journeys.durationFromIntended[name]
            let unfinished = s.journeys.unfinishedByName[name] ?? 0
            let stats =
                h.map { "p50 \(ms($0.p50)), p95 \(ms($0.p95)), p99 \(ms($0.p99)), max \(ms($0.max))" }
                ?? "none completed"
            lines.append(
                "journey \(name) from intended start: \(stats) (\(h?.count ?? 0) completed, \(unfinished) unfinished)")
        }
        return lines
    }

    /// One row per endpoint: attempts, calls, attempt latency quantiles, call p99, statuses, and the
    /// first off-contract body.
    ///
    /// Columns: attempt latency = service time of one HTTP attempt; call p99 = the whole call
    /// (retries and back-off included) measured from its intended start.
    private static func endpointTable(_ s: SoakSummary) -> [String] {
        let latencyHeader = ["p50", "p95", "p99", "p99.9", "max"].map { " " + $0.leftPadded(to: 8) }.joined()
        var lines = [
            String(repeating: " ", count: 32) + "attempt latency (one HTTP attempt)".leftPadded(to: 45)
                + " | whole call, from",
            "endpoint".padding(toLength: 15, withPad: " ", startingAt: 0) + " " + "attempts".leftPadded(to: 9) + " "
                + "calls".leftPadded(to: 6) + latencyHeader + " | intended start p99  statuses",
        ]
        for name in s.endpoints.keys.sorted() {
            guard let e = s.endpoints[name] else { continue }
            let statuses = e.byStatus.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " ")
            let columns =
                [
                    name.padding(toLength: 15, withPad: " ", startingAt: 0), String(format: "%9d", e.attempts),
                    String(format: "%6d", e.calls),
                ]
                + [
                    e.attemptLatency.p50, e.attemptLatency.p95, e.attemptLatency.p99, e.attemptLatency.p999,
                    e.attemptLatency.max,
                ].map { ms($0).leftPadded(to: 8) }
            lines.append(
                columns.joined(separator: " ") + " | " + ms(e.callLatency.p99).leftPadded(to: 18) + "  " + statuses)
            if let off = e.offContractResponses, off > 0 {
                lines.append("  \(off) of them answered \(name) with a body off the contract (not its JSON): failed")
                if let body = e.firstOffContractBody {
                    lines.append("    first such body: \(String(reflecting: body))")
                }
            }
        }
        return lines
    }

    /// Deferred matches, clicks and opens, and the peak memory.
    private static func deviceLines(_ s: SoakSummary) -> [String] {
        var lines: [String] = []
        if s.deferredMatch.firstLaunches > 0 {
            let methods = s.deferredMatch.byMethod.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            lines.append(
                "deferred match: \(s.deferredMatch.firstLaunches) first launches (\(s.deferredMatch.clicked) clicked): "
                    + methods.joined(separator: ", "))
        }
        if s.clicks.count > 0 || s.opens.count > 0 {
            lines.append(
                "clicks \(s.clicks.count) (clipboard placed \(s.clicks.clipboardPlaced)) · opens \(s.opens.count) "
                    + "(emitted \(s.opens.emitted), timed out \(s.opens.timedOut))")
        }
        lines += openLines(s.opens)
        if let peak = s.rss.map(\.bytes).max() {
            lines.append(String(format: "rss peak %.1f MB", Double(peak) / 1_048_576))
        }
        return lines
    }
}

extension SummaryText {
    /// The first line: `summary.json` `result` in the same word, its exit code, and why.
    static func resultLine(_ result: RunResult, _ s: SoakSummary) -> String {
        let failed = s.thresholds.filter { !$0.passed }.count
        // A shard's report judges the shard's health; `merge` judges the profile's thresholds.
        let shard = s.run.shards?.index != nil && s.run.shards?.slice != nil
        let why: String
        switch result {
        case .passed where shard:
            why = "the shard is healthy (\(s.thresholds.count) checks); `merge` judges the profile's thresholds"
        case .passed:
            why =
                s.thresholds.isEmpty ? "no threshold to judge" : "every threshold passed (\(s.thresholds.count) judged)"
        case .failed where shard:
            why = "\(failed) of the shard's \(s.thresholds.count) health checks failed (listed at the end)"
        case .failed: why = "\(failed) of \(s.thresholds.count) thresholds failed (listed at the end)"
        case .invalid:
            let cause =
                s.run.stopReason == .misconfigured
                ? "stopped early, every response was refused (misconfigured)"
                : s.notes.contains { $0.hasPrefix("--ledger could not be read") }
                    ? "the --ledger file could not be read"
                    : s.notes.contains { $0.hasPrefix("report I/O failed") }
                        ? "a report file is incomplete" : "the first note says why"
            why = "the run cannot be judged: \(cause)"
        case .regression:
            why = "every threshold passed, but the comparison with the baseline found a regression (compare/)"
        case .inconclusive:
            why =
                "every threshold passed, but the comparison with the baseline could not decide (compare/ or the log says why)"
        case .interrupted: why = "SIGINT stopped the run; its counts are partial"
        case .terminated: why = "SIGTERM stopped the run; its counts are partial"
        }
        return "result: \(result.rawValue) (exit \(result.exitCode)), \(why)"
    }

    /// The answer to the question the tool exists for, right under the title: did the server
    /// enforce the declared limits exactly, and did every client wait as told. Also why a run
    /// stopped early. Empty for a run that declares no limits and saw no 429.
    package static func headline(_ s: SoakSummary) -> [String] {
        var lines: [String] = []
        if s.run.stopReason == .misconfigured {
            lines.append("STOPPED EARLY (misconfigured): " + (s.notes.first { $0.hasPrefix("stopped early") } ?? ""))
        }
        // A generator that fell behind its plan qualifies every figure below, so it comes first.
        if GeneratorLine.isLimit(s) { lines.append(GeneratorLine.render(s)) }
        guard let verdicts = s.verdicts else { return lines }
        let limits = verdicts.limits
        if !limits.buckets.isEmpty {
            let buckets = limits.buckets.sorted { $0.key < $1.key }
            let wrong = buckets.filter { !$0.value.enforcedExactly && $0.value.reachedLimit }
            let unreached = buckets.filter { !$0.value.reachedLimit && $0.value.tooLenient == 0 }
            let lenient = buckets.filter { !$0.value.reachedLimit && $0.value.tooLenient > 0 }
            let details = buckets.map { name, b in
                "\(name) \(b.declared): "
                    + (b.keyMismatchHeadline
                        ?? (b.enforcedExactly
                            ? "exact (\(b.accepted) passed, \(b.rejected) rejected in \(b.windows) windows)"
                            : b.reachedLimit || b.tooLenient > 0
                                ? [
                                    ("too lenient", b.tooLenient), ("too strict", b.tooStrict), ("wrong N", b.wrongN),
                                    ("wrong message", b.wrongMessage),
                                ].filter { $0.1 > 0 }.map { "\($0.1) \($0.0)" }
                                    .joined(separator: ", ")
                                : "never reached (no 429)"))
                    + b.familyHeadline(declaredFamily: LimiterFamily(limits.algorithm))
            }.joined(separator: "; ")
            let verdict =
                !wrong.isEmpty || !lenient.isEmpty
                ? "NO, the server did not enforce the declared limits exactly"
                : !unreached.isEmpty ? "NOT SHOWN, a declared limit was never reached" : "YES, enforced exactly"
            let priorUse = buckets.reduce(0) { $0 + $1.value.priorUse }
            let hint =
                priorUse == 0
                ? ""
                : "; \(priorUse) 429s explained by use of the bucket before this run (a previous run or another "
                    + "client); reset the emulator between runs: POST /__admin/reset"
            lines.append("limits enforced by the server: \(verdict) — \(details)\(hint)")
        }
        let backoff = verdicts.backoff
        if !limits.buckets.isEmpty || backoff.rateLimited.checked > 0 || s.totals.status429 > 0 {
            let waited = backoff.rateLimited
            let retries = verdicts.retries
            let verdict: String
            if waited.checked == 0 {
                verdict = "NOT SHOWN, " + notJudged(status429: s.totals.status429, backoff)
            } else if waited.early > 0 || retries.violations > 0 {
                var problems: [String] = []
                if waited.early > 0 {
                    problems.append("\(waited.early) of \(waited.checked) retries after a 429 came early")
                }
                if retries.violations > 0 { problems.append("\(retries.violations) retry-matrix violations") }
                verdict = "NO, " + problems.joined(separator: "; ")
            } else {
                verdict =
                    "YES, \(waited.checked) retries after a 429 waited the N seconds it asked for"
                    + (waited.late > 0 ? " (\(waited.late) later than the tolerance)" : "")
                    + ", and the retry matrix was kept in \(retries.calls) calls"
            }
            lines.append("clients waited as told: \(verdict)")
        }
        return lines
    }
}

extension SummaryText {
    /// Why no retry after a 429 with `N` was judged: no 429 at all, or what became of them.
    package static func notJudged(status429: Int, _ backoff: BackoffVerdict) -> String {
        guard status429 > 0 else { return "no 429 was answered, so there was no retry after one to judge" }
        guard let unretried = backoff.rateLimitedNotRetried else {
            return "\(status429) 429s, no retry after one with N was judged"
        }
        if unretried.runEnded == status429 { return "\(status429) 429s, none followed by a retry before the run ended" }
        let parts = [
            (unretried.runEnded, "cut by the run's end before their retry"),
            (unretried.callEnded, "ended their call (retry budget spent, or an endpoint never retried)"),
            (backoff.rateLimitedWithoutN, "carried no N (their retries are judged on the exponential table)"),
        ].filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        return "\(status429) 429s, none retried after the N it asked for"
            + (parts.isEmpty ? "" : ": " + parts.joined(separator: "; "))
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }

}

extension SummaryText {
    /// The `opens` breakdown and, with an outage, the opens around it and their time to link.
    package static func openLines(_ opens: SoakSummary.OpenSummary) -> [String] {
        guard let byOutcome = opens.byOutcome, opens.count > 0 else { return [] }
        func n(_ outcome: OpenOutcome) -> Int { byOutcome[outcome.rawValue] ?? 0 }
        var lines = [
            "opens: \(n(.resolved)) resolved, \(n(.cached)) cached, \(n(.raw)) raw, \(n(.timedOut)) timed out, "
                + "\(n(.cancelledByRun)) cut by the run's end (lost \(opens.lost ?? 0))"
        ]
        guard let outage = opens.outage else { return lines }
        let windows = outage.windows.map { w in
            "\(w.mode) s\(Self.compact(w.startSeconds))–\(Self.compact(w.endSeconds))"
        }
        lines.append(
            "outage of /data (\(windows.joined(separator: ", "))), SDK worst case "
                + "\(Self.compact(outage.worstCaseSeconds)) s; Universal Link opens by phase:")
        for phase in [OpenPhase.before, .during, .after, .edge] where outage.count(phase) > 0 {
            var parts: [String] = []
            for group in ["cache_on", "cache_off"] {
                let total = outage.count(phase, group: group)
                guard total > 0 else { continue }
                let counts = OpenOutcome.allCases.compactMap { outcome -> String? in
                    let count = outage.count(phase, group: group, outcome)
                    guard count > 0 else { return nil }
                    return "\(count) \(outcome.rawValue) (\(Self.percent(count, of: total)))"
                }
                let name = group.replacingOccurrences(of: "_", with: " ")
                parts.append("\(name) \(total): \(counts.joined(separator: ", "))")
            }
            lines.append("  \(phase.rawValue): \(parts.joined(separator: " · "))")
        }
        let t = outage.timeToLink
        if t.count > 0 {
            lines.append(
                String(
                    format: "  time to link during the outage: p50 %.2f s, p95 %.2f s, p99 %.2f s, max %.2f s; "
                        + "%d over the worst case", t.p50, t.p95, t.p99, t.max, outage.overWorstCase))
            lines.append("  " + histogramBar(t, upTo: outage.worstCaseSeconds))
        }
        return lines
    }

    /// Counts of a time histogram in half-second bins up to `limit` seconds (and one bin beyond).
    static func histogramBar(_ histogram: HistogramSummary, upTo limit: Double) -> String {
        let width = 0.5
        let binCount = Int((limit / width).rounded(.up))
        var bins = [Int](repeating: 0, count: binCount + 1)
        // A hand-edited summary's buckets (nan, 1e300) are left out rather than trapped on.
        for bucket in histogram.buckets
        where bucket.count == 2 && RunSeconds.isPlausible(bucket[0]) && (0..<1e15).contains(bucket[1]) {
            let index = Swift.min(binCount, Swift.max(0, Int(bucket[0] / width)))
            bins[index] += Int(bucket[1])
        }
        var parts: [String] = []
        for (index, count) in bins.enumerated() where count > 0 {
            let low = Double(index) * width
            let label = index == binCount ? "≥\(compact(low)) s" : "\(compact(low))–\(compact(low + width)) s"
            parts.append("\(label) \(count)")
        }
        return "histogram: " + parts.joined(separator: " · ")
    }

    /// `20`, `7.5`, `0.25`: a number without trailing zeros.
    static func compact(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%g", value)
    }

    /// `count` of `total` as a percentage with one decimal.
    static func percent(_ count: Int, of total: Int) -> String {
        String(format: "%.1f%%", total > 0 ? Double(count) * 100 / Double(total) : 0)
    }
}
