import Foundation

/// The short human-readable report (`summary.txt`, also printed at the end of a run).
public enum SummaryText {
    public static func render(_ s: SoakSummary) -> String {
        func ms(_ seconds: Double) -> String { String(format: "%.1fms", seconds * 1000) }
        var lines: [String] = []
        lines.append("optolink-soak \(s.run.soakVersion) · profile \(s.run.profile) · run \(s.run.runId)")
        lines.append(
            "backend \(s.run.backend) \(s.run.baseURL) · \(s.run.loadModel) model · \(s.run.devices) devices · "
                + String(format: "%.1f s", s.run.durationSeconds) + " · stop: \(s.run.stopReason.rawValue)")
        lines.append(
            "journeys: \(s.journeys.started) started, \(s.journeys.completed) completed, \(s.journeys.unfinished) unfinished, "
                + "\(s.journeys.lateStarts) late starts (start lag p99 \(ms(s.journeys.startLag.p99)))")
        lines.append(
            "requests: \(s.totals.attempts) attempts, \(s.totals.calls) calls, "
                + String(format: "%.0f/s", s.totals.attemptsPerSecond) + ", 429s \(s.totals.status429), errors \(s.totals.errors)")
        // Columns: attempt latency = service time of one HTTP attempt; call p99 = the whole call
        // (retries and back-off included) measured from its intended start.
        let latencyHeader = ["p50", "p95", "p99", "p99.9", "max"].map { " " + $0.leftPadded(to: 8) }.joined()
        lines.append(
            String(repeating: " ", count: 32) + "attempt latency (one HTTP attempt)".leftPadded(to: 45) + " | whole call, from")
        lines.append(
            "endpoint".padding(toLength: 15, withPad: " ", startingAt: 0) + " " + "attempts".leftPadded(to: 9) + " "
                + "calls".leftPadded(to: 6) + latencyHeader + " | intended start p99  statuses")
        for name in s.endpoints.keys.sorted() {
            guard let e = s.endpoints[name] else { continue }
            let statuses = e.byStatus.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " ")
            let columns = [
                name.padding(toLength: 15, withPad: " ", startingAt: 0), String(format: "%9d", e.attempts),
                String(format: "%6d", e.calls),
            ] + [e.attemptLatency.p50, e.attemptLatency.p95, e.attemptLatency.p99, e.attemptLatency.p999, e.attemptLatency.max
                ].map { ms($0).leftPadded(to: 8) }
            lines.append(columns.joined(separator: " ") + " | " + ms(e.callLatency.p99).leftPadded(to: 18) + "  " + statuses)
        }
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
        if let peak = s.rss.map(\.bytes).max() {
            lines.append(String(format: "rss peak %.1f MB", Double(peak) / 1_048_576))
        }
        if let verdicts = s.verdicts {
            // The notes explain the back-off line's counts, so they follow it directly.
            var verdictLines = verdicts.summaryLines()
            verdictLines.insert(contentsOf: s.notes.map { "  note: \($0)" }, at: Swift.min(1, verdictLines.count))
            lines += verdictLines
        } else {
            lines += s.notes.map { "note: \($0)" }
        }
        for t in s.thresholds { lines.append(t.line) }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
