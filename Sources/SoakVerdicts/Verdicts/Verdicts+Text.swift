import Foundation

// Each verdict's report lines for the console and `summary.txt`: counts first, then the worst
// offender or the violation kinds where there are any.

extension BackoffVerdict {
    package func summaryLines() -> [String] {
        let backoff = self
        let total = backoff.total
        var backoffLine =
            "back-off: \(total.checked) retries judged — \(total.early) early, \(total.onTime) on time, \(total.late) late"
        if let p50 = backoff.excess.p50, let p99 = backoff.excess.p99, let max = backoff.excess.max {
            backoffLine += " (gap − expected p50 \(Verdicts.ms(p50)), p99 \(Verdicts.ms(p99)), max \(Verdicts.ms(max)))"
        }
        if let worst = backoff.worstEarly.first {
            backoffLine +=
                "; worst early: \(worst.device) call \(worst.callId) \(worst.endpoint.rawValue) waited "
                + "\(Verdicts.ms(worst.gapSeconds)) of \(Verdicts.ms(worst.expectedSeconds))"
        }
        return [backoffLine]
    }
}

extension RetryMatrixVerdict {
    package func summaryLines() -> [String] {
        let retries = self
        var retryLine = "retry matrix: \(retries.calls) calls, \(retries.violations) violations"
        if !retries.violationsByKind.isEmpty {
            retryLine +=
                " ("
                + retries.violationsByKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
                .joined(separator: ", ") + ")"
        }
        if retries.cutShort > 0 { retryLine += ", \(retries.cutShort) cut short by the end of the run" }
        return [retryLine]
    }
}

extension ReconciliationVerdict {
    package func summaryLines() -> [String] {
        let reconciliation = self
        var lines: [String] = []
        if reconciliation.available {
            let parts = reconciliation.endpoints.sorted { $0.key < $1.key }.filter { $0.value.calls > 0 }.map {
                name, c in
                "  \(name): \(c.deliveredOnce) delivered once, \(c.duplicated) duplicated, \(c.lost) lost, "
                    + "\(c.landedUnknown) landed unknown, \(c.notDelivered) not delivered"
                    + (c.notCovered > 0 ? ", \(c.notCovered) not covered" : "")
                    + (c.unexpected > 0 ? ", \(c.unexpected) unexpected" : "")
            }
            let heading = reconciliation.incomplete == nil ? "reconciliation" : "reconciliation INCOMPLETE"
            lines.append("\(heading) (against the server ledger):" + (parts.isEmpty ? " no writes" : ""))
            lines += parts
            if let incomplete = reconciliation.incomplete { lines.append("  " + incomplete.description) }
        } else {
            lines.append("reconciliation: \(reconciliation.note ?? "not available")")
        }
        return lines
    }
}

extension LimitOracleVerdict {
    package func summaryLines() -> [String] {
        let limits = self
        var lines: [String] = []
        if !limits.buckets.isEmpty || !limits.errors.isEmpty {
            let parts = limits.buckets.sorted { $0.key < $1.key }.map { name, b in
                let verdict: String
                if b.enforcedExactly {
                    verdict = "exact"
                } else if b.keyMismatch != nil && b.tooLenient + b.tooStrict + b.wrongN + b.wrongMessage == 0 {
                    verdict = "key mismatch"
                } else if !b.reachedLimit && b.tooLenient + b.tooStrict + b.wrongN + b.wrongMessage == 0 {
                    verdict = "not reached"
                } else {
                    verdict = [
                        ("too lenient", b.tooLenient), ("too strict", b.tooStrict), ("wrong N", b.wrongN),
                        ("wrong message", b.wrongMessage),
                    ].filter { $0.1 > 0 }.map { "\($0.1) \($0.0)" }.joined(separator: ", ")
                }
                let judged = b.accepted + b.rejected - b.ambiguous - b.priorUse
                let prior = b.priorUse > 0 ? ", \(b.priorUse) explained by use before the run" : ""
                let family = b.familyText(declaredFamily: LimiterFamily(limits.algorithm))
                return "  \(name) \(b.declared) — \(verdict) (\(b.windows) windows, \(b.accepted) passed, "
                    + "\(b.rejected) rejected; \(Swift.max(0, judged)) judged, \(b.ambiguous) ambiguous\(prior))"
                    + (family.isEmpty ? "" : "\n    \(family)") + (b.keyMismatchText.map { "\n    \($0)" } ?? "")
            }
            lines.append("limits (\(limits.algorithm.rawValue)):")
            lines += parts + limits.errors.map { "  \($0)" }
        }
        return lines
    }
}

extension AttributionVerdict {
    package func summaryLines() -> [String] {
        let attribution = self
        var lines: [String] = []
        let a = attribution.overall
        if a.devices > 0 {
            var line =
                "attribution: \(a.devices) devices — \(a.correct) correct, \(a.wrongLink) wrong link, \(a.missed) missed, "
                + "\(a.falsePositive) false positive, \(a.organic) organic"
            if let rate = a.correctRate { line += String(format: " (correct rate %.1f%%)", rate * 100) }
            let methods = attribution.byMethod.sorted { $0.key < $1.key }.filter { $0.key != "NONE" }.map { name, c in
                "\(name) \(c.correct)/\(c.correct + c.wrongLink + c.falsePositive)"
            }
            if !methods.isEmpty { line += "; correct/emitted by method: " + methods.joined(separator: ", ") }
            lines.append(line)
        }
        return lines
    }
}

extension Verdicts {
    /// Seconds as `12.3 ms` below one second, `1.25 s` from one second.
    package static func ms(_ seconds: Double) -> String {
        abs(seconds) >= 1 ? String(format: "%.2f s", seconds) : String(format: "%.1f ms", seconds * 1000)
    }
}
