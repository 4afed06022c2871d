import SoakRecords
import SoakTestSupport
import SoakVerdicts
import Testing

/// The limit oracle names the family the server showed and judges against it, and tells a server
/// that keys on one shared key from a too-strict one.
@Suite struct LimitOracleFamilyTests {
    /// Not on a 2 s clock edge: a window from the first hit and one on the clock differ.
    static let runStartEpoch = 1_000_000.3

    /// The server's answers as attempts, `ips` taking turns; times in run seconds.
    static func attempts(_ answers: [LimiterServerSimulator.Answer], ips: [String] = ["10.0.0.1"]) -> [AttemptRecord] {
        answers.enumerated().map { index, answer in
            let start = answer.time - runStartEpoch - 0.002
            return Fixture.attempt(
                .match, device: "d\(index)", call: UInt64(index + 1), start: start, end: start + 0.005,
                status: answer.admitted ? 201 : 429, retryAfter: answer.retryAfter, ip: ips[index % ips.count])
        }
    }

    static func verdict(_ attempts: [AttemptRecord], declared: String = "5/2s per ip") throws -> LimitOracleVerdict {
        let configuration = VerdictsConfiguration(limits: ["match": try DeclaredLimit(parsing: declared)])
        return Verdicts.run(
            LimitOracleVerdict.self, attempts: attempts,
            context: VerdictContext(configuration: configuration, runStartEpoch: runStartEpoch))
    }

    static func bucket(_ attempts: [AttemptRecord]) throws -> LimitOracleVerdict.Bucket {
        try #require(try verdict(attempts).buckets["match"])
    }

    static func served(_ kind: LimiterServerSimulator.Kind, limit: Int = 5, count: Int = 80)
        -> [LimiterServerSimulator.Answer]
    {
        LimiterServerSimulator.serve(
            LimiterServerSimulator.arrivals(from: runStartEpoch + 0.5, count: count), kind, limit: limit, window: 2)
    }

    @Test func aCorrectClockAlignedWindowIsExactAndNamed() throws {
        let verdict = try Self.verdict(Self.attempts(Self.served(.family(.fixedWindowClock))))
        let bucket = try #require(verdict.buckets["match"])
        #expect(bucket.family == .fixedWindowClock)
        #expect(bucket.tooLenient == 0 && bucket.tooStrict == 0 && bucket.wrongN == 0)
        #expect(bucket.enforcedExactly)
        var metrics: [String: Double] = [:]
        verdict.addMetrics(to: &metrics)
        #expect(metrics["limits.match.family_declared"] == 0)
        #expect(metrics["limits.family_undeclared"] == 1)
    }

    @Test func theDeclaredFamilyKeepsItsOwnJudgement() throws {
        let bucket = try Self.bucket(Self.attempts(Self.served(.family(.fixedWindow))))
        #expect(bucket.family == .fixedWindow)
        #expect(bucket.enforcedExactly)
    }

    /// A correct server of every family, the declared algorithm fixed window from the first hit:
    /// exact, and the report names the family it saw.
    @Test(arguments: LimiterFamily.allCases)
    func aCorrectServerOfEachFamilyIsExactAndNamed(family: LimiterFamily) throws {
        let verdict = try Self.verdict(Self.attempts(Self.served(.family(family))))
        let bucket = try #require(verdict.buckets["match"])
        #expect(bucket.family == family, "fitting \(bucket.familiesFitting)")
        #expect(bucket.familyLimit == nil)
        #expect(bucket.tooLenient == 0 && bucket.tooStrict == 0 && bucket.wrongN == 0)
        #expect(bucket.enforcedExactly)
        #expect(bucket.familyText(declaredFamily: .fixedWindow).hasPrefix("family \(family.rawValue)"))
    }

    /// One hit too many per window, in every family (the anchored window the declared one): still
    /// too lenient, against the family the server showed.
    @Test(arguments: LimiterFamily.allCases)
    func aTooLenientServerOfAnotherFamilyIsCaughtAgainstIt(family: LimiterFamily) throws {
        let bucket = try Self.bucket(Self.attempts(Self.served(.family(family), limit: 6)))
        #expect(bucket.tooLenient > 0)
        #expect(!bucket.enforcedExactly)
        #expect(bucket.family == family)
        #expect(bucket.familyLimit == 6)
    }

    /// A window from the first hit that restarts on every 429 keeps clients out longer than any
    /// correct limiter: no family explains it, and the 429s are too strict against the declared one.
    @Test func aWindowThatRestartsOnEveryRejectIsCaughtAndNoFamilyNamed() throws {
        let bucket = try Self.bucket(Self.attempts(Self.served(.resetOnReject, count: 120)))
        #expect(bucket.family == nil, "fitting \(bucket.familiesFitting)")
        #expect(bucket.tooStrict > 0)
        #expect(!bucket.enforcedExactly)
        #expect(bucket.familyText(declaredFamily: .fixedWindow).hasPrefix("no limiter family explains the answers"))
    }

    @Test func aServerKeyedOnTheSocketPeerIsAKeyMismatchNotTooStrict() throws {
        // Four client IPs, one shared window: each IP sees 429s long before its own five.
        let answers = Self.served(.family(.fixedWindow), count: 120)
        let bucket = try Self.bucket(Self.attempts(answers, ips: ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]))
        let mismatch = try #require(bucket.keyMismatch)
        #expect(mismatch.declared == .ip && mismatch.fitting == .shared)
        #expect(mismatch.family == .fixedWindow)
        #expect(mismatch.declaredTooStrict > 0)
        #expect(bucket.tooStrict == 0 && bucket.tooLenient == 0)
        #expect(bucket.priorUse == 0)
        #expect(!bucket.enforcedExactly)
        #expect(bucket.keyMismatchText?.contains("X-Forwarded-For") == true)
    }

    @Test func aCorrectPerIPServerIsNoKeyMismatch() throws {
        let ips = ["10.0.0.1", "10.0.0.2"]
        let answers = Self.served(.family(.fixedWindow), count: 60)
        // Each IP gets its own correct window.
        let perIP = ips.flatMap { ip in
            Self.attempts(answers, ips: [ip]).map { record -> AttemptRecord in
                var record = record
                record.device += ip
                return record
            }
        }
        let bucket = try Self.bucket(perIP)
        #expect(bucket.keyMismatch == nil)
        #expect(bucket.enforcedExactly)
    }
}
