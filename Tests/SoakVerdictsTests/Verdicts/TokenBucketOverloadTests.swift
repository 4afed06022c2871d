import Foundation
import SoakRecords
import SoakVerdicts
import Testing

/// The events bucket of `Profiles/limits.json` (40 per 2 s per key, every device on one key)
/// against `Tests/Scripts/limiter_server.py --family token`: a correct token bucket, overloaded
/// (650 events in 8 s, 43–114 ms per answer, so a hit's interval spans one to two tokens' refill).
/// The attempts are the run's own (`Tests/Fixtures/limiters/token-bucket-events-overload.csv`).
@Suite struct TokenBucketOverloadTests {
    static func attempts() throws -> [AttemptRecord] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try ReportCSVReader.attempts(
            root.appendingPathComponent("Fixtures/limiters/token-bucket-events-overload.csv"))
    }

    /// A replay by interval middles cannot know the server's order when an interval spans more
    /// than one token's refill; 429s replayed ahead of overlapping passes are explained by those
    /// passes (one pass may explain several 429s, several passes one). One answer stays
    /// unexplained: an earlier narrow 429 showed the bucket held under one token, which the
    /// replay does not learn, so its level runs a fraction of a token high for a few refills.
    @Test("a correct token bucket under overload: the closest family, one answer of 650 unexplained")
    func overloadedTokenBucketIsClosest() throws {
        let configuration = VerdictsConfiguration(
            limits: ["events": try DeclaredLimit(parsing: "40/2s per key")], algorithm: .fixedWindow)
        let verdict = Verdicts.run(
            LimitOracleVerdict.self, attempts: try Self.attempts(),
            context: VerdictContext(configuration: configuration, runStartEpoch: 1_796_381_198.357_992_2))
        let bucket = try #require(verdict.buckets["events"])
        let token = try #require(bucket.familyScores.first { $0.family == .tokenBucket })
        #expect(token.judged == 650)
        #expect(token.tooLenient == 0 && token.wrongN == 0)
        #expect(token.tooStrict <= 1, "\(token)")
        #expect(token.swapped > 100, "the overlaps the replay resolved: \(token)")
        for other in bucket.familyScores where other.family != .tokenBucket {
            #expect(other.mismatches >= 80, "\(other)")
        }
    }
}
