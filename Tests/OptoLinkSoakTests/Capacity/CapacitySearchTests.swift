import OptoLinkSoak
import Testing

/// Drives ``CapacitySearch`` against synthetic backends: functions from a probe rate to an outcome.
@Suite("capacity search: bracket, recover, bisect")
struct CapacitySearchTests {
    typealias Outcome = CapacitySearch.Outcome

    /// The probes asked for, in order, and the answer.
    struct Trace {
        var probes: [(rate: Double, purpose: CapacitySearch.Purpose)] = []
        var answer: CapacitySearch.Answer
    }

    /// Runs the search to its end (bounded: at most 100 steps, far above any budget used here).
    static func run(_ settings: CapacitySearch.Settings, backend: (Double) -> Outcome) throws -> Trace {
        var search = CapacitySearch(settings)
        var probes: [(rate: Double, purpose: CapacitySearch.Purpose)] = []
        var step = search.start()
        for _ in 0..<100 {
            switch step {
            case .done(let answer): return Trace(probes: probes, answer: answer)
            case .probe(let rate, let purpose):
                probes.append((rate, purpose))
                step = search.record(backend(rate))
            }
        }
        Issue.record("the search did not end within 100 steps")
        throw CancellationError()
    }

    static let latency = "events.call_latency.p99 < 250ms"
    static let errors = "http.failed.rate < 0.01"

    /// A backend that holds the SLO up to and including `knee` journeys/s.
    static func knee(_ knee: Double, clause: String = latency) -> (Double) -> Outcome {
        { $0 <= knee ? .pass : .fail(clause: clause) }
    }

    @Test("a knee at 100/s from 60/s: brackets, checks recovery, bisects to within 5 %")
    func findsKnee() throws {
        let trace = try Self.run(.init(minRate: 60, maxRate: 1000), backend: Self.knee(100))
        #expect(trace.probes.map(\.rate) == [60, 120, 60, 90, 105, 97.5, 101.25])
        #expect(trace.probes.map(\.purpose) == [.bracket, .bracket, .recovery, .bisect, .bisect, .bisect, .bisect])
        #expect(trace.answer.ending == .knee)
        #expect(trace.answer.knee == 97.5)
        #expect(trace.answer.low == 97.5 && trace.answer.high == 101.25)
        #expect(trace.answer.limitedBy == Self.latency)
        #expect(trace.answer.probes == 7)
    }

    @Test(
        "any knee is bracketed within the tolerance and every probe stays in [min, max]",
        arguments: [7.0, 10.0, 33.3, 100.0, 640.0, 999.0, 4096.0])
    func bracketsAnyKnee(knee: Double) throws {
        let settings = CapacitySearch.Settings(minRate: 5, maxRate: 10_000, tolerance: 0.05, maxProbes: 30)
        let trace = try Self.run(settings, backend: Self.knee(knee))
        #expect(trace.answer.ending == .knee)
        let low = try #require(trace.answer.low)
        let high = try #require(trace.answer.high)
        #expect(low <= knee && knee < high)
        #expect(high <= low * 1.05)
        #expect(trace.probes.allSatisfy { (5...10_000).contains($0.rate) })
        #expect(trace.probes.filter { $0.purpose == .recovery }.count == 1)
        #expect(trace.answer.probes == trace.probes.count)
    }

    @Test("a knee exactly at a bracket edge that passes: 80/s is the answer, to the exact rate")
    func kneeAtPassingEdge() throws {
        let trace = try Self.run(.init(minRate: 20, maxRate: 1000, maxProbes: 10), backend: Self.knee(80))
        #expect(trace.probes.map(\.rate) == [20, 40, 80, 160, 80, 120, 100, 90, 85, 82.5])
        #expect(trace.answer.ending == .knee)
        #expect(trace.answer.knee == 80)
        #expect(trace.answer.high == 82.5)
    }

    @Test("a knee exactly at a bracket edge that fails: the doubling probe at 80/s is the bracket's top")
    func kneeAtFailingEdge() throws {
        let trace = try Self.run(.init(minRate: 20, maxRate: 1000)) { $0 < 80 ? .pass : .fail(clause: Self.errors) }
        #expect(trace.probes.map(\.rate) == [20, 40, 80, 40, 60, 70, 75, 77.5])
        #expect(trace.answer.ending == .knee)
        #expect(trace.answer.low == 77.5 && trace.answer.high == 80)
        #expect(trace.answer.limitedBy == Self.errors)
    }

    @Test("the done-when case: a knee found within 5 % in at most 8 probes from a minimum below it")
    func withinEightProbes() throws {
        let trace = try Self.run(.init(minRate: 150, maxRate: 2000), backend: Self.knee(250))
        #expect(trace.answer.ending == .knee)
        #expect(trace.probes.count <= 8)
        let knee = try #require(trace.answer.knee)
        #expect(abs(knee - 250) / 250 <= 0.05)
    }

    @Test("the generator saturates first: invalid at 400/s ends the search with the generator named")
    func generatorSaturatesFirst() throws {
        let trace = try Self.run(.init(minRate: 50, maxRate: 5000)) { rate in
            rate > 300 ? .invalid(reason: "late starts 12 %") : .pass
        }
        #expect(trace.probes.map(\.rate) == [50, 100, 200, 400])
        #expect(trace.answer.ending == .generatorLimit)
        #expect(trace.answer.generatorLimit == 400)
        #expect(trace.answer.generatorReason == "late starts 12 %")
        #expect(trace.answer.knee == 200)
        #expect(trace.answer.high == nil)
    }

    @Test("an invalid probe while bisecting also ends the search, keeping the bracket found so far")
    func invalidWhileBisecting() throws {
        let trace = try Self.run(.init(minRate: 100, maxRate: 5000)) { rate in
            if rate >= 200 { return .fail(clause: Self.latency) }
            return rate == 150 ? .invalid(reason: "CPU 99 %") : .pass
        }
        #expect(trace.probes.map(\.rate) == [100, 200, 100, 150])
        #expect(trace.answer.ending == .generatorLimit)
        #expect(trace.answer.low == 100 && trace.answer.high == 200)
    }

    @Test("a backend that does not recover: the probe back at the last passing rate fails")
    func doesNotRecover() throws {
        var broken = false
        let trace = try Self.run(.init(minRate: 50, maxRate: 5000)) { rate in
            if rate > 100 { broken = true }
            return broken ? .fail(clause: rate > 100 ? Self.errors : Self.latency) : .pass
        }
        #expect(trace.probes.map(\.rate) == [50, 100, 200, 100])
        #expect(trace.probes.last?.purpose == .recovery)
        #expect(trace.answer.ending == .notRecovered)
        #expect(trace.answer.limitedBy == Self.errors)
        #expect(trace.answer.low == 100 && trace.answer.high == 200)
    }

    @Test("the budget runs out while bracketing: the answer is a lower bound, with no top")
    func budgetOutWhileBracketing() throws {
        let trace = try Self.run(.init(minRate: 1, maxRate: 1_000_000, maxProbes: 4)) { _ in .pass }
        #expect(trace.probes.map(\.rate) == [1, 2, 4, 8])
        #expect(trace.answer.ending == .budgetExhausted)
        #expect(trace.answer.knee == 8)
        #expect(trace.answer.high == nil)
    }

    @Test("the budget runs out while bisecting: the bracket is wider than the tolerance")
    func budgetOutWhileBisecting() throws {
        let trace = try Self.run(.init(minRate: 20, maxRate: 1000), backend: Self.knee(80))
        #expect(trace.probes.count == 8)
        #expect(trace.answer.ending == .budgetExhausted)
        #expect(trace.answer.low == 80 && trace.answer.high == 90)
    }

    @Test("the budget runs out right before the recovery probe: the search stops there")
    func budgetOutBeforeRecovery() throws {
        let trace = try Self.run(.init(minRate: 50, maxRate: 1000, maxProbes: 2), backend: Self.knee(60))
        #expect(trace.probes.map(\.rate) == [50, 100])
        #expect(trace.answer.ending == .budgetExhausted)
    }

    @Test("the SLO fails at the minimum rate: one probe, no knee, the failing term named")
    func failsAtMinimum() throws {
        let trace = try Self.run(.init(minRate: 10, maxRate: 1000)) { _ in .fail(clause: Self.errors) }
        #expect(trace.probes.count == 1)
        #expect(trace.answer.ending == .failedAtMinimum)
        #expect(trace.answer.knee == nil)
        #expect(trace.answer.limitedBy == Self.errors)
    }

    @Test("every rate up to the maximum passes: the doubling stops at the maximum, which is the answer")
    func sustainsMaximum() throws {
        let trace = try Self.run(.init(minRate: 100, maxRate: 300)) { _ in .pass }
        #expect(trace.probes.map(\.rate) == [100, 200, 300])
        #expect(trace.answer.ending == .sustainedMax)
        #expect(trace.answer.knee == 300)
    }

    @Test("limitedBy names the term that failed at the lowest failing rate, not the first one seen")
    func limitedByLowestFailure() throws {
        let trace = try Self.run(.init(minRate: 100, maxRate: 1000, tolerance: 0.3)) { rate in
            if rate > 150 { return .fail(clause: Self.errors) }
            return rate > 120 ? .fail(clause: Self.latency) : .pass
        }
        #expect(trace.probes.map(\.rate) == [100, 200, 100, 150, 125])
        #expect(trace.answer.ending == .knee)
        #expect(trace.answer.limitedBy == Self.latency)
    }

    @Test(
        "settings that cannot drive a search are named",
        arguments: [
            (CapacitySearch.Settings(minRate: 0, maxRate: 10), "minimum rate"),
            (CapacitySearch.Settings(minRate: 20, maxRate: 10), "maximum rate"),
            (CapacitySearch.Settings(minRate: 1, maxRate: 10, tolerance: 0), "tolerance"),
            (CapacitySearch.Settings(minRate: 1, maxRate: 10, maxProbes: 0), "probe budget"),
        ])
    func badSettings(settings: CapacitySearch.Settings, named: String) {
        #expect(settings.problem?.contains(named) == true)
        #expect(CapacitySearch.Settings(minRate: 1, maxRate: 10).problem == nil)
    }
}
