import Testing

import SoakRecords
import SoakVerdicts
import SoakSupport
import SoakTestSupport

/// The limit oracle against simulated servers: random bursty traffic, random client-side
/// latency around each server arrival (sometimes far longer than the window), faults the
/// limiter never sees, responses lost after the limiter counted them. A server that enforces
/// the declaration must never be reported lenient, strict or wrong about `N`; one that lets
/// one more through per window (or one fewer) must be caught, never over-counted. (A wrong
/// server can also trip the other kind: the oracle places edge hits assuming a correct one.)
@Suite struct VerdictLimitOracleSimulationTests {
    /// The package's seeded generator, so every scenario replays.
    struct Random {
        private var generator: SeededRandom
        init(state: UInt64) { generator = SeededRandom(seed: state) }
        mutating func next() -> Double { generator.unit() }
        mutating func int(_ range: ClosedRange<Int>) -> Int {
            range.lowerBound + Int(next() * Double(range.count)) % range.count
        }
    }

    struct Outcome {
        var attempts: [AttemptRecord] = []
        /// Passes beyond the declared limit, per the server's own windows (fixed window).
        var excess = 0
        /// Windows in which the server rejected a hit it should have let through.
        var strictRejections = 0
    }

    /// Simulates `count` hits against a server enforcing `enforced` per `ttl` seconds.
    static func simulate(
        _ random: inout Random, algorithm: VerdictsConfiguration.WindowAlgorithm, declared: Int, enforced: Int,
        ttl: Double, count: Int = 80
    ) -> Outcome {
        var outcome = Outcome()
        var arrival = 0.0
        var windowStart = -Double.infinity
        var hitsInWindow = 0
        var acceptedInWindow = 0
        var log: [Double] = []
        var windows: [(accepted: Int, rejectedEarly: Int)] = []
        for index in 0..<count {
            arrival += random.next() < 0.3 ? random.next() * ttl : random.next() * 0.05
            let start = arrival - random.next() * 0.02
            let end = random.next() < 0.05 ? arrival + random.next() * 2 * ttl : arrival + random.next() * 0.02
            var status: Int?
            var n: Int?
            let fault = random.next()
            if fault < 0.08 {
                status = 503  // answered before the limiter
            } else {
                let passed: Bool
                switch algorithm {
                case .fixedWindow:
                    if arrival >= windowStart + ttl {
                        windows.append((acceptedInWindow, 0))
                        windowStart = arrival
                        hitsInWindow = 0
                        acceptedInWindow = 0
                    }
                    hitsInWindow += 1
                    passed = hitsInWindow <= enforced
                    if passed { acceptedInWindow += 1 }
                    if !passed && hitsInWindow <= declared { windows[windows.count - 1].rejectedEarly += 1 }
                    n = max(1, Int((windowStart + ttl - arrival).rounded(.up)))
                case .slidingWindow:
                    log.removeAll { $0 <= arrival - ttl }
                    passed = log.count < enforced
                    if passed { log.append(arrival) }
                    n = max(1, Int(((log.first ?? arrival) + ttl - arrival).rounded(.up)))
                }
                if passed {
                    status = fault < 0.12 ? nil : (fault < 0.15 ? 500 : 200)  // lost or 5xx after the limiter
                    n = nil
                } else {
                    status = 429
                }
            }
            outcome.attempts.append(
                Fixture.attempt(
                    .events, device: "d\(index)", call: UInt64(index + 1), start: start, end: end, status: status,
                    retryAfter: n, ip: nil))
        }
        windows.append((acceptedInWindow, 0))
        outcome.excess = windows.reduce(0) { $0 + max(0, $1.accepted - declared) }
        outcome.strictRejections = windows.reduce(0) { $0 + $1.rejectedEarly }
        return outcome
    }

    static func judge(
        _ attempts: [AttemptRecord], declared: Int, ttl: Double, _ algorithm: VerdictsConfiguration.WindowAlgorithm
    )
        -> LimitOracleVerdict.Bucket?
    {
        let configuration = VerdictsConfiguration(
            limits: ["events": DeclaredLimit(limit: declared, windowSeconds: ttl, scope: .key)], algorithm: algorithm)
        return LimitOracleVerdict.evaluate(attempts, configuration: configuration).buckets["events"]
    }

    @Test(arguments: [VerdictsConfiguration.WindowAlgorithm.fixedWindow, .slidingWindow])
    func aCorrectServerIsNeverAccused(algorithm: VerdictsConfiguration.WindowAlgorithm) throws {
        var random = Random(state: 42)
        for scenario in 0..<300 {
            let limit = random.int(1...8)
            let ttl = [0.5, 1, 2][random.int(0...2)]
            let outcome = Self.simulate(&random, algorithm: algorithm, declared: limit, enforced: limit, ttl: ttl)
            let bucket = try #require(Self.judge(outcome.attempts.shuffled(), declared: limit, ttl: ttl, algorithm))
            #expect(bucket.tooLenient == 0, "scenario \(scenario): \(bucket.examples)")
            #expect(bucket.tooStrict == 0, "scenario \(scenario): \(bucket.examples)")
            #expect(bucket.wrongN == 0, "scenario \(scenario): \(bucket.examples)")
            #expect(bucket.wrongMessage == 0)
        }
    }

    @Test(arguments: [VerdictsConfiguration.WindowAlgorithm.fixedWindow, .slidingWindow])
    func aServerOneTooLenientIsCaughtAndNeverOverCounted(algorithm: VerdictsConfiguration.WindowAlgorithm) throws {
        var random = Random(state: 7)
        var caught = 0
        var truth = 0
        for _ in 0..<200 {
            let limit = random.int(2...8)
            let ttl = [0.5, 1, 2][random.int(0...2)]
            let outcome = Self.simulate(&random, algorithm: algorithm, declared: limit, enforced: limit + 1, ttl: ttl)
            let bucket = try #require(Self.judge(outcome.attempts, declared: limit, ttl: ttl, algorithm))
            if algorithm == .fixedWindow { #expect(bucket.tooLenient <= outcome.excess) }
            caught += bucket.tooLenient
            truth += outcome.excess
        }
        #expect(caught > 0)
        if algorithm == .fixedWindow { #expect(Double(caught) >= 0.25 * Double(truth), "caught \(caught) of \(truth)") }
    }

    @Test func aServerOneTooStrictIsCaughtAndNeverOverCounted() throws {
        var random = Random(state: 99)
        var caught = 0
        var truth = 0
        for _ in 0..<200 {
            let limit = random.int(2...8)
            let ttl = [0.5, 1, 2][random.int(0...2)]
            let outcome = Self.simulate(
                &random, algorithm: .fixedWindow, declared: limit, enforced: limit - 1, ttl: ttl)
            let bucket = try #require(Self.judge(outcome.attempts, declared: limit, ttl: ttl, .fixedWindow))
            #expect(bucket.tooStrict <= outcome.strictRejections)
            caught += bucket.tooStrict
            truth += outcome.strictRejections
        }
        #expect(caught > 0)
        #expect(Double(caught) >= 0.25 * Double(truth), "caught \(caught) of \(truth)")
    }
}
