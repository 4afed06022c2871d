import Testing

import SoakRecords
import SoakVerdicts
import SoakTestSupport

@Suite struct VerdictLimitOracleTests {
    func oracle(
        _ attempts: [AttemptRecord], _ declared: String = "5/2s per ip", bucket: String = "match",
        algorithm: VerdictsConfiguration.WindowAlgorithm = .fixedWindow
    ) throws -> LimitOracleVerdict.Bucket {
        let configuration = VerdictsConfiguration(
            limits: [bucket: try DeclaredLimit(parsing: declared)], algorithm: algorithm)
        let verdict = LimitOracleVerdict.evaluate(attempts, configuration: configuration)
        return try #require(verdict.buckets[bucket])
    }

    /// Five passes from t = start every 0.1 s, then `rejected` 429s with the right N.
    static func exactWindow(start: Double, rejected: Int = 3, ttl: Double = 2) -> [(Double, Int?, Int?)] {
        let passes: [(Double, Int?, Int?)] = (0..<5).map { (start + Double($0) * 0.1, 200, nil) }
        let rejections: [(Double, Int?, Int?)] = (0..<rejected).map { index in
            let at = start + 0.5 + Double(index) * 0.1
            return (at, 429, Int((start + ttl - at).rounded(.up)))
        }
        return passes + rejections
    }

    @Test func exactFixedWindowEnforcementIsRecognised() throws {
        let bucket = try oracle(Fixture.hits(Self.exactWindow(start: 0) + Self.exactWindow(start: 2.5, rejected: 1)))
        #expect(bucket.windows == 2)
        #expect(bucket.accepted == 10)
        #expect(bucket.rejected == 4)
        #expect(bucket.tooLenient == 0)
        #expect(bucket.tooStrict == 0)
        #expect(bucket.wrongN == 0)
        #expect(bucket.wrongMessage == 0)
        #expect(bucket.ambiguous == 0)
        #expect(bucket.enforcedExactly)
    }

    @Test func withoutA429TheLimitWasNotExercised() throws {
        let bucket = try oracle(Fixture.hits([(0, 201, nil), (0.1, 201, nil)]))
        #expect(!bucket.reachedLimit)
        #expect(!bucket.enforcedExactly)
    }

    @Test func acceptedPastTheLimitIsTooLenient() throws {
        let list: [(Double, Int?, Int?)] = (0..<7).map { (Double($0) * 0.1, 201, nil) } + [(0.8, 429, 2)]
        let bucket = try oracle(Fixture.hits(list))
        #expect(bucket.tooLenient == 2)
        #expect(!bucket.enforcedExactly)
        #expect(bucket.examples.filter { $0.kind == .tooLenient }.count == 2)
    }

    @Test func serverTenPercentTooLenientIsCaught() throws {
        // Declared 30 per 2 s; the server lets 33 through in each of two windows.
        let window: (Double) -> [(Double, Int?, Int?)] = { start in
            (0..<33).map { (start + Double($0) * 0.01, 201, nil) } + [(start + 0.5, 429, 2)]
        }
        let bucket = try oracle(Fixture.hits(window(0) + window(3)), "30/2s per ip")
        #expect(bucket.windows == 2)
        #expect(bucket.tooLenient == 6)
    }

    @Test func a429BeforeTheLimitIsTooStrict() throws {
        let list: [(Double, Int?, Int?)] = [
            (0, 201, nil), (0.1, 201, nil), (0.2, 201, nil), (0.3, 429, 2), (0.4, 429, 2), (0.5, 429, 2),
        ]
        let bucket = try oracle(Fixture.hits(list))
        #expect(bucket.tooStrict == 2)
        #expect(bucket.tooLenient == 0)
    }

    @Test func aServerWindowLongerThanDeclaredIsTooStrict() throws {
        // Declared 2 s; the server still rejects at 2.3 s (a fresh window's first hit).
        let bucket = try oracle(Fixture.hits(Self.exactWindow(start: 0) + [(2.3, 429, 1)]))
        #expect(bucket.windows == 2)
        #expect(bucket.tooStrict == 1)
    }

    @Test func uncertainAttemptsMayExcuseA429() throws {
        let list: [(Double, Int?, Int?)] = [
            (0, 201, nil), (0.1, 201, nil), (0.2, 201, nil), (0.25, 201, nil), (0.3, nil, nil), (0.4, 429, 2),
        ]
        let bucket = try oracle(Fixture.hits(list))
        #expect(bucket.tooStrict == 0)
        #expect(bucket.uncertain == 1)
    }

    @Test func a5xxMayComeFromBeforeTheLimiterSoItIsNeverCountedAsPassed() throws {
        // Five passes, then a 503 (a before-commit fault the limiter never saw), then a pass.
        var list = Self.exactWindow(start: 0, rejected: 0)
        list += [(0.5, 503, nil), (0.6, 201, nil), (0.7, 429, 2)]
        let bucket = try oracle(Fixture.hits(list))
        #expect(bucket.tooLenient == 1)
        #expect(bucket.uncertain == 1)
        // A 503 and a timeout may both have been counted: they excuse an early 429.
        let excused = try oracle(
            Fixture.hits([
                (0, 201, nil), (0.1, 201, nil), (0.2, 201, nil), (0.3, 503, nil), (0.4, nil, nil), (0.5, 429, 2),
            ]))
        #expect(excused.tooStrict == 0)
    }

    @Test func anUncertainHitDoesNotOpenAWindowForCertain() throws {
        // The 503 at 0 s may never have reached the limiter: the window may have opened at 0.5 s,
        // so the 429 at 1.2 s is no evidence of a window held too long.
        let list: [(Double, Int?, Int?)] = [
            (0, 503, nil), (0.5, 201, nil), (0.6, 201, nil), (0.9, 429, 1), (1.2, 429, 1),
        ]
        let bucket = try oracle(Fixture.hits(list), "2/1s per ip")
        #expect(bucket.tooStrict == 0)
        #expect(bucket.wrongN == 0)
        #expect(bucket.tooLenient == 0)
    }

    @Test func wrongAndMissingNAreCounted() throws {
        var list = Self.exactWindow(start: 0, rejected: 0)
        list += [(0.5, 429, 2), (0.6, 429, 5), (0.7, 429, nil), (1.9, 429, 2)]
        let bucket = try oracle(Fixture.hits(list))
        #expect(bucket.wrongN == 2)  // 5 is too long; at 1.9 s only 1 s can be left
        #expect(bucket.wrongMessage == 1)
        #expect(bucket.tooStrict == 0)
    }

    @Test func hitsAtTheWindowEdgeAreAmbiguousNotJudged() throws {
        // Three passes; one more at 1.99 s, where the window may or may not have closed: it is
        // either the 4th hit of the first window or the opener of the second.
        let list: [(Double, Int?, Int?)] = [
            (0, 201, nil), (0.1, 201, nil), (0.2, 201, nil), (1.99, 201, nil),
            (2.1, 201, nil), (2.2, 201, nil), (2.3, 201, nil), (2.4, 201, nil), (2.5, 429, 2),
        ]
        let bucket = try oracle(Fixture.hits(list))
        #expect(bucket.ambiguous == 1)
        #expect(bucket.tooLenient == 0)
        #expect(bucket.tooStrict == 0)  // the 429 is excused: 1.99 may have opened its window
        #expect(bucket.wrongN == 0)
    }

    @Test func aPassAtTheEdgeOfAFullWindowBelongsToTheNextOne() throws {
        // The first window is full of certain passes, so the pass at 1.99 s opened the second
        // window; five more passes there make six.
        var list = Self.exactWindow(start: 0, rejected: 0)
        list += [(1.99, 201, nil)] + (0..<5).map { (2.1 + Double($0) * 0.1, 201, nil) }
        let bucket = try oracle(Fixture.hits(list))
        #expect(bucket.ambiguous == 0)
        #expect(bucket.windows == 2)
        #expect(bucket.tooLenient == 1)
    }

    @Test func aPassAtTheEdgeAfterA429BelongsToTheNextWindow() throws {
        // A server allowing 4 where 5 are declared: the 429 at 0.4 s is too strict in each
        // window, including the second one, opened by the pass at the first window's edge.
        let window: (Double) -> [(Double, Int?, Int?)] = { start in
            (0..<4).map { (start + Double($0) * 0.1, 201, nil) } + [(start + 0.4, 429, 2), (start + 0.5, 429, 2)]
        }
        let bucket = try oracle(Fixture.hits(window(0) + window(1.99)))
        #expect(bucket.windows == 2)
        #expect(bucket.ambiguous == 0)
        #expect(bucket.tooStrict == 2)
    }

    @Test func perIPKeysAreCountedSeparately() throws {
        let attempts =
            Fixture.hits(Self.exactWindow(start: 0), ip: "10.0.0.1")
            + Fixture.hits(Self.exactWindow(start: 0.05), ip: "10.0.0.2")
        let bucket = try oracle(attempts)
        #expect(bucket.keys == 2)
        #expect(bucket.tooLenient == 0)
        #expect(bucket.enforcedExactly)
        // The same traffic judged per key is one bucket and far too lenient.
        let perKey = try oracle(attempts, "5/2s per key")
        #expect(perKey.keys == 1)
        #expect(perKey.tooLenient == 5)
    }

    @Test func theSharedBucketCountsSessionAndIdentityTogether() throws {
        let attempts =
            Fixture.hits([(0, 200, nil), (0.1, 200, nil), (0.2, 200, nil)], .session)
            + Fixture.hits([(0.3, 200, nil), (0.4, 200, nil), (0.5, 200, nil)], .identity)
            + Fixture.hits([(0.6, 429, 2)], .identityClear)
            + Fixture.hits([(0.7, 200, nil)], .events)
        let bucket = try oracle(attempts, "5/2s per key shared", bucket: "session_identity")
        #expect(bucket.accepted == 6)
        #expect(bucket.rejected == 1)
        #expect(bucket.tooLenient == 1)
    }

    @Test func slidingWindowExactLenientAndStrict() throws {
        let exact = try oracle(
            Fixture.hits([
                (0, 201, nil), (0.1, 201, nil), (0.2, 201, nil), (0.3, 429, 1), (1.05, 201, nil), (1.07, 429, 1),
                (1.25, 201, nil),
            ]),
            "3/1s per ip", algorithm: .slidingWindow)
        #expect(exact.tooLenient == 0)
        #expect(exact.tooStrict == 0)
        #expect(exact.enforcedExactly)

        let lenient = try oracle(
            Fixture.hits([(0, 201, nil), (0.1, 201, nil), (0.2, 201, nil), (0.3, 201, nil), (0.4, 429, 1)]),
            "3/1s per ip", algorithm: .slidingWindow)
        #expect(lenient.tooLenient == 1)

        let strict = try oracle(
            Fixture.hits([(0, 201, nil), (0.1, 201, nil), (0.3, 429, 1), (1.5, 429, 1)]),
            "3/1s per ip", algorithm: .slidingWindow)
        #expect(strict.tooStrict == 2)
    }

    @Test func slidingWindowCountsOnlyPassesCertainlyInsideTheWindow() throws {
        // A slow pass (0.03…0.95 s) may have arrived before the window of the hit at 1.05 s opened.
        var attempts = Fixture.hits([(0.5, 201, nil), (0.6, 201, nil), (1.05, 201, nil)])
        attempts.append(Fixture.attempt(.match, device: "slow", start: 0.03, end: 0.95, status: 201, ip: "10.0.0.1"))
        let bucket = try oracle(attempts, "3/1s per ip", algorithm: .slidingWindow)
        #expect(bucket.tooLenient == 0)
        #expect(bucket.ambiguous == 1)
        // Arriving certainly inside the window, the same slow pass makes the third one too many.
        var inside = Fixture.hits([(0.5, 201, nil), (0.6, 201, nil), (1.05, 201, nil)])
        inside.append(Fixture.attempt(.match, device: "slow", start: 0.2, end: 0.95, status: 201, ip: "10.0.0.1"))
        let caught = try oracle(inside, "3/1s per ip", algorithm: .slidingWindow)
        #expect(caught.tooLenient == 1)
    }

    @Test func fenwickTreePrefixSums() {
        var tree = FenwickTree(count: 5)
        for rank in [0, 2, 2, 4] { tree.add(at: rank) }
        #expect((0...6).map { tree.prefixSum($0) } == [0, 1, 1, 3, 3, 4, 4])
    }

    @Test func metricsPerBucketAndTotals() throws {
        let configuration = VerdictsConfiguration(limits: ["match": try DeclaredLimit(parsing: "5/2s per ip")])
        let list: [(Double, Int?, Int?)] = (0..<6).map { (Double($0) * 0.1, 201, nil) }
        let limits = LimitOracleVerdict.evaluate(Fixture.hits(list), configuration: configuration)
        let metrics = VerdictsReport.empty(limits: limits).metrics()
        #expect(metrics["limits.match.too_lenient"] == 1)
        #expect(metrics["limits.too_lenient"] == 1)
        #expect(metrics["limits.match.exact"] == 0)
        #expect(VerdictsReport.empty().metrics()["limits.too_lenient"] == nil)
    }
}
