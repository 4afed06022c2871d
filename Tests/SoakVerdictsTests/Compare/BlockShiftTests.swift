import Foundation
import SoakSupport
import Testing

import SoakVerdicts

@Suite("compare: latency judged over blocks")
struct BlockShiftTests {
    /// One synthetic run of `seconds` one-second blocks with `perSecond` requests each: latencies
    /// around `median` seconds (log-normal-ish spread), each second slowed by a machine-phase factor
    /// (20 % of seconds stall ×1.3–×3, which moves p99 by several milliseconds), the whole run by
    /// `phase`, and every latency by `slowdown`.
    static func run(
        seed: UInt64, median: Double, phase: Double = 1, slowdown: Double = 1, seconds: Int = 20, perSecond: Int = 40
    ) -> LatencySamples {
        var rng = SeededRandom(seed: seed)
        var samples = LatencySamples()
        for second in 0..<seconds {
            let stall = rng.unit() < 0.2 ? 1.3 + rng.unit() * 1.7 : 1
            for i in 0..<perSecond {
                let spread = exp((rng.unit() + rng.unit() + rng.unit() - 1.5) * 0.6)
                let t = Double(second) + Double(i) / Double(perSecond)
                samples.add(median * spread * stall * phase * slowdown, startedAt: t, to: "events.attempt")
            }
        }
        return samples
    }

    /// The default rule's verdict on one pair of synthetic runs.
    static func judged(_ baseline: LatencySamples, _ current: LatencySamples) -> SoakComparison.LatencyComparison {
        let rules = RegressionRules()
        let blocks = SoakComparison.blockShifts("events.attempt", baseline: baseline, current: current, rules: rules)
        var groups = [
            [
                SoakComparison.latencyComparison(
                    kind: "attempt", baseline: nil, current: nil, blocks: blocks, rules: rules)
            ]
        ]
        SoakComparison.judgeLatency(&groups, rules: rules)
        return groups[0][0]
    }

    @Test("identical-distribution runs with a machine-phase wobble are not flagged")
    func wobbleIsNotARegression() {
        var flagged: [String] = []
        for pair in 0..<40 {
            let seed = UInt64(pair) * 2 + 1
            // Millisecond latencies: a whole run up to 1.5× slower is the machine's phase, a few ms at most.
            let fast = Self.judged(
                Self.run(seed: seed, median: 0.002),
                Self.run(seed: seed + 1, median: 0.002, phase: 1 + Double(pair % 6) / 10))
            // Tens of milliseconds: the same distribution, other draws.
            let slow = Self.judged(Self.run(seed: seed, median: 0.02), Self.run(seed: seed + 1, median: 0.02))
            for l in [fast, slow] where l.regressed { flagged.append(l.reason) }
        }
        #expect(flagged.count <= 1, "\(flagged)")
    }

    @Test("a real 30 % slowdown is flagged, with its shift and interval in the reason")
    func slowdownIsFlagged() throws {
        var missed: [String] = []
        for pair in 0..<20 {
            let seed = UInt64(pair) * 2 + 1
            let l = Self.judged(
                Self.run(seed: seed, median: 0.02), Self.run(seed: seed + 1, median: 0.02, slowdown: 1.3))
            if !l.regressed { missed.append(l.reason) }
        }
        #expect(missed.isEmpty, "\(missed)")
        let l = Self.judged(Self.run(seed: 1, median: 0.02), Self.run(seed: 2, median: 0.02, slowdown: 1.3))
        let cited = try #require(l.cited)
        #expect(cited.shiftLow > 0 && cited.shiftLow <= cited.shift && cited.shift <= cited.shiftHigh)
        #expect(l.reason.hasPrefix("slower") && l.reason.contains("95 % CI") && l.reason.contains("10 vs 10 blocks"))
    }

    @Test("a 5 ms slowdown of millisecond latencies is flagged; one under the floor is not")
    func absoluteFloor() {
        let base = Self.run(seed: 3, median: 0.001)
        var shifted = LatencySamples()
        var tiny = LatencySamples()
        for s in base.series["events.attempt"] ?? [] {
            shifted.add(s.seconds + 0.005, startedAt: s.t, to: "events.attempt")
            tiny.add(s.seconds + 0.0015, startedAt: s.t, to: "events.attempt")
        }
        #expect(Self.judged(Self.run(seed: 4, median: 0.001), shifted).regressed)
        let under = Self.judged(Self.run(seed: 4, median: 0.001), tiny)
        #expect(!under.regressed && under.reason.hasPrefix("within the floors"), "\(under.reason)")
    }

    @Test("Hodges–Lehmann shift and interval of two known samples; too few blocks are not tested")
    func hodgesLehmann() throws {
        let shift = try #require(
            BlockShift.compare(
                quantile: "p50", blockSeconds: 1, baseline: [1, 2, 3, 4, 5, 6], current: [11, 12, 13, 14, 15, 16]))
        #expect(shift.shift == 10 && shift.baseline == 3.5 && shift.current == 13.5)
        #expect(shift.shiftLow >= 7 && shift.shiftHigh <= 13 && shift.shiftLow < 10 && shift.shiftHigh > 10)
        #expect(shift.pGreater < 0.01)
        var few = LatencySamples()
        for t in 0..<3 { for _ in 0..<10 { few.add(0.01, startedAt: Double(t), to: "x") } }
        #expect(SoakComparison.blockShifts("x", baseline: few, current: few, rules: RegressionRules()).isEmpty)
        // Blocks under minBlockSamples are left out; the rest keep their own quantile.
        var sparse = LatencySamples()
        sparse.add(0.5, startedAt: 0.5, to: "x")
        for v in [0.001, 0.002, 0.003, 0.004, 0.005] { sparse.add(v, startedAt: 1.5, to: "x") }
        let q = sparse.blockQuantiles("x", quantile: 0.5, blockSeconds: 1, minSamples: 5)
        #expect(q.values == [0.003] && q.blockSeconds == 1)
    }
}
