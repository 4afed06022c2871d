import Testing

import SoakVerdicts

@Suite struct LimiterFamilyFitTests {
    static let declared = DeclaredLimit(limit: 5, windowSeconds: 2, scope: .ip)
    /// Not on a 2 s clock edge, so a window anchored at the first hit and one on the clock differ.
    static let start = 1_000_000.3

    func fit(
        _ kind: LimiterServerSimulator.Kind, served limit: Int = 5, declared family: LimiterFamily = .fixedWindow,
        count: Int = 80
    ) -> LimiterFamilyFit {
        let answers = LimiterServerSimulator.serve(
            LimiterServerSimulator.arrivals(from: Self.start, count: count), kind, limit: limit, window: 2)
        return Self.fit(LimiterServerSimulator.observations(answers), declared: family)
    }

    static func fit(
        _ observations: [LimiterObservation], declared family: LimiterFamily, limit: DeclaredLimit = declared,
        tolerance: Double = 0.01
    ) -> LimiterFamilyFit {
        let limits = [limit.limit] + LimiterFamilyFit.candidateLimits(around: limit.limit)
        let scores = limits.flatMap { value in
            LimiterFamily.allCases.map {
                LimiterFamilyReplay.score($0, declared: limit, limit: value, tolerance: tolerance, observations)
            }
        }
        return LimiterFamilyFit(scores: scores, limit: limit.limit, declared: family)
    }

    @Test(arguments: LimiterFamily.allCases)
    func aCorrectLimiterIsNamedAndExact(family: LimiterFamily) throws {
        let fit = fit(.family(family))
        #expect(fit.family == family, "fitting \(fit.fitting), scores \(fit.scores)")
        let score = try #require(fit.score(of: family))
        #expect(score.mismatches == 0 && score.wrongN == 0)
        #expect(score.judged == 80)
        #expect(fit.fittedLimit == nil)
    }

    @Test(arguments: LimiterFamily.allCases)
    func eachCorrectFamilyRulesOutTheFixedWindowFromTheFirstHit(family: LimiterFamily) throws {
        guard family != .fixedWindow else { return }
        let fit = fit(.family(family))
        #expect(!fit.fitting.contains(.fixedWindow))
        #expect(try #require(fit.score(of: .fixedWindow)).mismatches > 0)
    }

    @Test(arguments: LimiterFamily.allCases)
    func aTooLenientLimiterOfEachFamilyIsStillCaught(family: LimiterFamily) throws {
        let fit = fit(.family(family), served: 6)
        #expect(fit.family == family, "fitting \(fit.fitting), scores \(fit.scores)")
        #expect(fit.fittedLimit == 6)
        let score = try #require(fit.score(of: family))
        #expect(score.tooLenient > 0 && score.tooStrict == 0)
    }

    @Test(arguments: LimiterFamily.allCases)
    func aTooStrictLimiterOfEachFamilyIsStillCaught(family: LimiterFamily) throws {
        let fit = fit(.family(family), served: 4)
        #expect(fit.family == family, "fitting \(fit.fitting), scores \(fit.scores)")
        #expect(fit.fittedLimit == 4)
        #expect(try #require(fit.score(of: family)).tooStrict > 0)
    }

    @Test func aWindowThatRestartsOnEveryRejectFitsNoFamily() throws {
        // Bursts over the limit keep the faulty window closed past where any correct one reopens.
        let fit = fit(.resetOnReject, count: 120)
        #expect(fit.fitting.isEmpty, "fitting \(fit.fitting)")
        #expect(try #require(fit.score(of: .fixedWindow)).tooStrict > 0)
    }

    @Test func aHitExactlyOnTheEdgeBelongsToTheWindowItOpens() throws {
        let limit = DeclaredLimit(limit: 2, windowSeconds: 2, scope: .ip)
        func hit(_ time: Double, _ admitted: Bool, _ n: Int? = nil) -> LimiterObservation {
            LimiterObservation(key: "k", earliest: time, latest: time, admitted: admitted, retryAfterSeconds: n)
        }
        // Windows [10, 12) on the clock and from the first hit alike; the log's first pass leaves at 12.
        let correct = [hit(10, true), hit(10.5, true), hit(11.999, false, 1), hit(12, true)]
        for family in [LimiterFamily.fixedWindow, .fixedWindowClock, .slidingLog] {
            let score = LimiterFamilyReplay.score(family, declared: limit, tolerance: 0, correct)
            #expect(score.mismatches == 0 && score.wrongN == 0, "\(family): \(score)")
        }
        let rejectsOnTheEdge = [hit(10, true), hit(10.5, true), hit(11.999, false, 1), hit(12, false, 2)]
        for family in [LimiterFamily.fixedWindow, .fixedWindowClock, .slidingLog] {
            let score = LimiterFamilyReplay.score(family, declared: limit, tolerance: 0, rejectsOnTheEdge)
            #expect(score.tooStrict == 1, "\(family): \(score)")
        }
        // A pass a moment before the edge is one too many.
        let passesBeforeTheEdge = [hit(10, true), hit(10.5, true), hit(11.999, true)]
        let clock = LimiterFamilyReplay.score(.fixedWindowClock, declared: limit, tolerance: 0, passesBeforeTheEdge)
        #expect(clock.tooLenient == 1)
    }

    @Test func aWrongNIsCountedAgainstTheFamilyThatFits() throws {
        var answers = LimiterServerSimulator.serve(
            LimiterServerSimulator.arrivals(from: Self.start, count: 40), .family(.fixedWindowClock), limit: 5,
            window: 2)
        let first = try #require(answers.firstIndex { !$0.admitted })
        answers[first].retryAfter = 60
        let fit = Self.fit(LimiterServerSimulator.observations(answers), declared: .fixedWindow)
        #expect(fit.family == .fixedWindowClock)
        #expect(try #require(fit.score(of: .fixedWindowClock)).wrongN == 1)
    }

    @Test func aLimitNeverReachedFitsEveryFamilyAndTheDeclaredOneIsNamed() {
        let answers = LimiterServerSimulator.serve(
            LimiterServerSimulator.arrivals(from: Self.start, count: 3), .family(.tokenBucket), limit: 5, window: 2)
        let fit = Self.fit(LimiterServerSimulator.observations(answers), declared: .slidingLog)
        #expect(fit.fitting == LimiterFamily.allCases)
        #expect(fit.family == .slidingLog)
    }

    @Test func withSeveralOtherFamiliesFittingTheFirstIsNamedAndTheOthersListed() {
        func score(_ family: LimiterFamily, mismatches: Int) -> LimiterFamilyScore {
            var score = LimiterFamilyScore(family: family, limit: 5)
            score.judged = 40
            score.tooStrict = mismatches
            return score
        }
        let scores = [
            score(.fixedWindow, mismatches: 3), score(.fixedWindowClock, mismatches: 0),
            score(.slidingLog, mismatches: 2), score(.slidingWindowCounter, mismatches: 0),
            score(.tokenBucket, mismatches: 9),
        ]
        let fit = LimiterFamilyFit(scores: scores, limit: 5, declared: .fixedWindow)
        #expect(fit.fitting == [.fixedWindowClock, .slidingWindowCounter])
        #expect(fit.family == .fixedWindowClock)
    }

    @Test func answersNoFamilyExplainsAreSaidSo() {
        func score(_ family: LimiterFamily, limit: Int) -> LimiterFamilyScore {
            var score = LimiterFamilyScore(family: family, limit: limit)
            score.judged = 40
            score.tooLenient = 12
            return score
        }
        let limits = [5] + LimiterFamilyFit.candidateLimits(around: 5)
        let fit = LimiterFamilyFit(
            scores: limits.flatMap { limit in LimiterFamily.allCases.map { score($0, limit: limit) } }, limit: 5,
            declared: .fixedWindow)
        #expect(fit.family == nil)
        #expect(fit.fitting.isEmpty)
        #expect(fit.closest?.mismatches == 12)
    }
}
