import Foundation

extension SoakComparison {
    /// The block quantiles `compare` judges, with their names.
    package static let blockQuantiles: [(name: String, q: Double)] = [("p50", 0.50), ("p95", 0.95)]

    /// Each block quantile of series `key` compared between the runs; empty when either run has no
    /// samples or fewer than ``RegressionRules/minBlocks`` blocks.
    package static func blockShifts(
        _ key: String, baseline: LatencySamples?, current: LatencySamples?, rules: RegressionRules
    ) -> [BlockShift] {
        guard let baseline, let current else { return [] }
        return blockQuantiles.compactMap { name, q in
            let b = baseline.blockQuantiles(
                key, quantile: q, blockSeconds: rules.blockSeconds, minSamples: rules.minBlockSamples)
            let c = current.blockQuantiles(
                key, quantile: q, blockSeconds: max(rules.blockSeconds, b.blockSeconds),
                minSamples: rules.minBlockSamples)
            guard b.values.count >= rules.minBlocks, c.values.count >= rules.minBlocks else { return nil }
            return BlockShift.compare(
                quantile: name, blockSeconds: c.blockSeconds, baseline: quiet(b.values, rules: rules),
                current: quiet(c.values, rules: rules))
        }
    }

    /// The quietest ``RegressionRules/quietBlockFraction`` of a run's block quantiles, but never
    /// fewer than twice ``RegressionRules/minBlocks`` (a short run keeps all its blocks, or the test
    /// could not reach significance): the machine slows some seconds and never speeds one up, while
    /// a slower backend or SDK slows every second, so the quiet seconds show a code change without
    /// the stalls that make the busy ones differ from run to run.
    static func quiet(_ values: [Double], rules: RegressionRules) -> [Double] {
        let kept = max(2 * rules.minBlocks, Int((Double(values.count) * rules.quietBlockFraction).rounded(.up)))
        return Array(values.sorted().prefix(kept))
    }

    /// One latency series in both runs: whole-run quantiles and Mann–Whitney (reported) and the
    /// block shifts (deciding, judged by ``judgeLatency(_:rules:)``).
    package static func latencyComparison(
        kind: String, baseline: HistogramSummary?, current: HistogramSummary?, blocks: [BlockShift],
        rules: RegressionRules
    ) -> LatencyComparison {
        let pairs = [\HistogramSummary.p50, \.p95, \.p99].map { path in
            Delta(baseline?[keyPath: path] ?? 0, current?[keyPath: path] ?? 0)
        }
        var result = LatencyComparison(
            kind: kind, p50: pairs[0], p95: pairs[1], p99: pairs[2], test: nil, blocks: blocks, regressed: false,
            reason: "")
        if let baseline, let current, baseline.count >= 20, current.count >= 20 {
            result.test = MannWhitneyU.test(baseline: baseline, current: current)
        }
        if blocks.isEmpty {
            result.reason =
                "not tested: fewer than \(rules.minBlocks) blocks of \(ThresholdResult.format(rules.blockSeconds)) s "
                + "with \(rules.minBlockSamples)+ requests in a run"
        }
        return result
    }

    /// Applies the default rule to every block shift: significance by Holm's step-down procedure
    /// over all of the comparison's block tests (family-wise error ≤ `alpha`, however many
    /// endpoints there are), then the relative and absolute effect-size floors on the shift.
    package static func judgeLatency(_ groups: inout [[LatencyComparison]], rules: RegressionRules) {
        var tested: [(group: Int, latency: Int, block: Int, p: Double)] = []
        for (i, group) in groups.enumerated() {
            for (j, l) in group.enumerated() {
                for (k, shift) in l.blocks.enumerated() { tested.append((i, j, k, shift.pGreater)) }
            }
        }
        tested.sort { $0.p < $1.p }
        var significant = Set<[Int]>()
        for (rank, t) in tested.enumerated() {
            guard t.p < rules.alpha / Double(tested.count - rank) else { break }
            significant.insert([t.group, t.latency, t.block])
        }
        for i in groups.indices {
            for j in groups[i].indices where !groups[i][j].blocks.isEmpty {
                judge(
                    &groups[i][j], significant: { significant.contains([i, j, $0]) }, tests: tested.count, rules: rules)
            }
        }
    }

    /// Flags `l` when one of its block shifts is significant and over both floors, and says why.
    static func judge(
        _ l: inout LatencyComparison, significant: (Int) -> Bool, tests: Int, rules: RegressionRules
    ) {
        let overFloor: (BlockShift) -> Bool = {
            $0.shift > rules.minAbsoluteSeconds && ($0.relative ?? .infinity) > rules.minRelative
        }
        let flagged = l.blocks.indices.filter { significant($0) && overFloor(l.blocks[$0]) }
        l.regressed = !flagged.isEmpty
        let citedIndex = flagged.first ?? l.blocks.indices.max { l.blocks[$0].shift < l.blocks[$1].shift } ?? 0
        let cited = l.blocks[citedIndex]
        l.cited = cited
        let what = describe(cited)
        if l.regressed {
            l.reason = "slower (significant among \(tests) block tests, over the floors): \(what)"
        } else if significant(citedIndex) {
            l.reason =
                "within the floors (\(ThresholdResult.format(rules.minRelative * 100))% and "
                + "\(formatSeconds(rules.minAbsoluteSeconds))): \(what)"
        } else {
            l.reason = "within noise: \(what)"
        }
    }

    /// `p95 of 1 s blocks 3.1ms → 4.0ms: +0.9ms (95 % CI −0.2ms … +2.0ms, +29%), p = 0.04, 12 vs 11 blocks`.
    package static func describe(_ s: BlockShift) -> String {
        let relative = s.relative.map { String(format: ", %+.0f%%", $0 * 100) } ?? ""
        return "\(s.quantile) of \(ThresholdResult.format(s.blockSeconds)) s blocks \(formatSeconds(s.baseline)) → "
            + "\(formatSeconds(s.current)): \(signed(s.shift)) (95 % CI \(signed(s.shiftLow)) … "
            + "\(signed(s.shiftHigh))\(relative)), p = \(String(format: "%.2g", s.pGreater)), "
            + "\(s.baselineBlocks) vs \(s.currentBlocks) blocks"
    }

    /// A signed duration: `+1.2ms`, `−0.4ms`.
    package static func signed(_ seconds: Double) -> String {
        (seconds < 0 ? "−" : "+") + formatSeconds(abs(seconds))
    }
}
