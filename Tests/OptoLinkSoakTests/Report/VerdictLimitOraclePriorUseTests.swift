import Foundation
import OptoLink
import Testing

import OptoLinkSoak
import SoakVerdicts
import SoakReports
import SoakTestSupport

/// Traffic in a bucket from before the run (a previous run against the same `serve`, another
/// client of a shared staging backend): a server enforcing its limit exactly must not look too
/// strict or wrong about `N` because of it, and a server that is too strict must still be caught.
@Suite struct VerdictLimitOraclePriorUseTests {
    typealias Timeline = [(Double, Int?, Int?)]

    func oracle(_ list: Timeline, algorithm: VerdictsConfiguration.WindowAlgorithm = .fixedWindow) throws
        -> LimitOracleVerdict.Bucket
    {
        let configuration = VerdictsConfiguration(
            limits: ["match": try DeclaredLimit(parsing: "30/60s per ip")], algorithm: algorithm)
        return try #require(
            LimitOracleVerdict.evaluate(Fixture.hits(list), configuration: configuration).buckets["match"])
    }

    /// The same timeline through the streaming pass (pruning past a 5 s horizon), hits by end.
    func streamed(_ list: Timeline) throws -> LimitOracleVerdict.Bucket {
        let configuration = VerdictsConfiguration(limits: ["match": try DeclaredLimit(parsing: "30/60s per ip")])
        var pass = LimitOracleVerdict.Pass(configuration: configuration, horizonSeconds: 5)
        for attempt in Fixture.hits(list).sorted(by: { $0.end < $1.end }) {
            pass.consume(.attempt(attempt))
        }
        return try #require(pass.finish().buckets["match"])
    }

    /// A key whose server window (30/60 s) opened 40 s before the run's first hit, with 25 hits
    /// of an earlier run: it closes at 20 s. The run passes 5 times, then gets 429s with the `N`
    /// the server gives (`ceil(20 - t)`).
    static let priorWindow: Timeline =
        (0..<5).map { (Double($0) * 0.5, 201, nil) }
        + (0..<5).map { index in
            let at = 2.5 + Double(index) * 0.5
            return (at, 429, Int((20 - at).rounded(.up)))
        }

    @Test("the issue: a window opened before the run is use before the run, not a too strict server")
    func aWindowOpenedBeforeTheRunIsPriorUse() throws {
        let bucket = try oracle(Self.priorWindow)
        #expect(bucket.tooStrict == 0)
        #expect(bucket.wrongN == 0)
        #expect(bucket.priorUse == 5)
        #expect(bucket.ambiguous == 0)
        #expect(bucket.enforcedExactly)
        #expect(try streamed(Self.priorWindow) == bucket)

        // The report says it, and still calls the limit enforced exactly.
        // An empty fixed-window verdict (no limits declared), then the one bucket.
        var limits = LimitOracleVerdict.evaluate([], configuration: VerdictsConfiguration())
        limits.buckets["match"] = bucket
        var summary = try WholeRuns.MainJobTests.emptySummary()
        summary.verdicts = VerdictsReport(results: [limits])
        let headline = SummaryText.headline(summary)[0]
        #expect(headline.hasPrefix("limits enforced by the server: YES, enforced exactly"), "\(headline)")
        #expect(headline.contains("5 429s explained by use of the bucket before this run"), "\(headline)")
        #expect(headline.contains("POST /__admin/reset"))
        #expect(limits.summaryLines().joined().contains("5 explained by use before the run"))
        var metrics: [String: Double] = [:]
        limits.addMetrics(to: &metrics)
        #expect(metrics["limits.match.prior_use"] == 5)
        #expect(metrics["limits.prior_use"] == 5)
    }

    @Test("a server enforcing 25 where 30 are declared is still too strict in the run's first window")
    func aStrictServerIsStillCaughtInTheFirstWindow() throws {
        // Its window opens at the run's first hit, so its N agrees with the oracle's window.
        let passes: Timeline = (0..<25).map { (Double($0) * 0.1, 201, nil) }
        let rejections: Timeline = [3.0, 3.5, 4.0].map { at in (at, 429, Int((60 - at).rounded(.up))) }
        let list = passes + rejections
        let bucket = try oracle(list)
        #expect(bucket.tooStrict == 3)
        #expect(bucket.priorUse == 0)
        #expect(bucket.wrongN == 0)
        #expect(!bucket.enforcedExactly)
    }

    @Test("after the earlier window closes mid-run, the next one is judged normally: a lenient server is caught")
    func theWindowAfterPriorUseIsJudgedNormally() throws {
        // The server's next window opens at 21 s; it lets 32 through where 30 are declared.
        let list =
            Self.priorWindow + (0..<32).map { (21 + Double($0) * 0.1, 201, nil) }
            + [(25, 429, 56), (26, 429, 55)]
        let bucket = try oracle(list)
        #expect(bucket.windows == 2)
        #expect(bucket.priorUse == 5)
        #expect(bucket.tooLenient == 2)
        #expect(bucket.tooStrict == 0)
        #expect(bucket.wrongN == 0)
        #expect(try streamed(list) == bucket)

        // A server whose next window is exact is exact overall.
        let exact = try oracle(
            Self.priorWindow + (0..<30).map { (21 + Double($0) * 0.1, 201, nil) } + [(25, 429, 56)])
        #expect(exact.windows == 2)
        #expect(exact.enforcedExactly)
        #expect(exact.priorUse == 5)
    }

    @Test("an N that ends the window only within the edge tolerance before the oracle's is ambiguous")
    func anNInsideTheToleranceIsAmbiguous() throws {
        // Window 0…60 s (tolerance 0.04 s): a 429 at 10.97 s with N = 49 says the server's
        // window closes by 59.971 s, within the tolerance of 60 s.
        let passes: Timeline = (0..<5).map { (Double($0) * 0.5, 201, nil) }
        let band = try oracle(passes + [(10.97, 429, 49)])
        #expect(band.ambiguous == 1)
        #expect(band.priorUse == 0)
        #expect(band.tooStrict == 0)
        #expect(band.wrongN == 0)
        // One second less is clearly before it: use from before the run.
        let clear = try oracle(passes + [(10.97, 429, 48)])
        #expect(clear.priorUse == 1)
        #expect(clear.ambiguous == 0)
        #expect(clear.tooStrict == 0)
    }

    @Test("sliding window: hits logged before the run explain 429s until they leave the log")
    func slidingWindowPriorHits() throws {
        // 25 hits logged at -40…-37.6 s leave the log at 20…22.4 s; the oldest then is the run's
        // pass at 0 s.
        var list = Self.priorWindow
        list += (0..<25).map { (25 + Double($0) * 0.1, 201, nil) }
        list += [(28, 429, 32)]
        let bucket = try oracle(list, algorithm: .slidingWindow)
        #expect(bucket.priorUse == 5)
        #expect(bucket.tooStrict == 0)
        #expect(bucket.wrongN == 0)
        #expect(bucket.enforcedExactly)

        // A 429 whose N points at the run's own oldest pass, with too few passes logged, is
        // too strict (a sliding server enforcing 25).
        var strict: Timeline = (0..<25).map { (Double($0) * 0.1, 201, nil) }
        strict += [(3, 429, 57), (3.5, 429, 57)]
        let caught = try oracle(strict, algorithm: .slidingWindow)
        #expect(caught.tooStrict == 2)
        #expect(caught.priorUse == 0)
    }

    /// The timeline through the pass that knows the server's buckets started empty (the run's own emulator).
    func freshServer(_ list: Timeline, algorithm: VerdictsConfiguration.WindowAlgorithm) throws
        -> LimitOracleVerdict.Bucket
    {
        var context = VerdictContext(
            configuration: VerdictsConfiguration(
                limits: ["match": try DeclaredLimit(parsing: "30/60s per ip")], algorithm: algorithm))
        context.bucketsStartEmpty = true
        var pass = LimitOracleVerdict.makePass(context)
        for attempt in Fixture.hits(list).sorted(by: { $0.end < $1.end }) {
            pass.consume(.attempt(attempt))
        }
        return try #require(pass.finish().buckets["match"])
    }

    @Test(
        "a server known to start empty (the run's own emulator) cannot have prior use: early 429s are too strict",
        arguments: [VerdictsConfiguration.WindowAlgorithm.fixedWindow, .slidingWindow])
    func aFreshServerHasNoPriorUse(algorithm: VerdictsConfiguration.WindowAlgorithm) throws {
        // The timeline a shared backend explains by an earlier window: from a fresh server, five
        // 429s after five passes of thirty are a server enforcing too strictly.
        let fresh = try freshServer(Self.priorWindow, algorithm: algorithm)
        #expect(fresh.priorUse == 0)
        #expect(fresh.tooStrict == 5)
        #expect(fresh.ambiguous == 0)
        #expect(!fresh.enforcedExactly)
        // Nor is an N inside the edge tolerance ambiguous: nothing came before the run.
        let passes: Timeline = (0..<5).map { (Double($0) * 0.5, 201, nil) }
        let band = try freshServer(passes + [(10.97, 429, 49)], algorithm: algorithm)
        #expect(band.ambiguous == 0 && band.priorUse == 0)
        #expect(band.tooStrict == 1)
        // The same server judged exactly stays exact: 30 passes, then 429s with the right N.
        let exactList: Timeline =
            (0..<30).map { (Double($0) * 0.1, 201, nil) } + [(4.0, 429, 56), (5.0, 429, 55)]
        let exact = try freshServer(exactList, algorithm: algorithm)
        #expect(exact.enforcedExactly, "\(exact)")
        #expect(exact.tooStrict == 0 && exact.priorUse == 0)
    }

    @Test("a bucket from a summary written before prior use was counted decodes with 0")
    func olderSummaryDecodesWithZero() throws {
        var bucket = LimitOracleVerdict.Bucket(
            declared: DeclaredLimit(limit: 30, windowSeconds: 60, scope: .ip), endpoints: [.match])
        bucket.rejected = 4
        bucket.priorUse = 3
        let data = try JSONEncoder().encode(bucket)
        #expect(try JSONDecoder().decode(LimitOracleVerdict.Bucket.self, from: data) == bucket)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["priorUse"] as? Int == 3)
        object.removeValue(forKey: "priorUse")
        let older = try JSONDecoder().decode(
            LimitOracleVerdict.Bucket.self, from: try JSONSerialization.data(withJSONObject: object))
        #expect(older.priorUse == 0)
        #expect(older.rejected == 4)
        #expect(older.enforcedExactly)
    }
}
