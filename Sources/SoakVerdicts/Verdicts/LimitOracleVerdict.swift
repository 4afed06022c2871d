import SoakSupport
import SoakRecords

/// Limit oracle: replays the attempt timeline against the profile's declared limits and says
/// where the server was too lenient, too strict, or answered a 429 with a wrong message or `N`
/// (docs/CONTRACT.md §1, "Rate limits").
///
/// Each attempt that got a response is a hit on its bucket key (the client IP for `per ip`, the
/// run's one API key for `per key`); a 429 is a rejection, a 2xx or another 4xx passed the limiter.
/// An attempt without a response, or answered by a 5xx (which a fault or a proxy may have sent
/// before the limiter ran), is **uncertain**: it may or may not have been counted, so it is only
/// ever used to excuse a 429. The server's arrival time of a hit lies somewhere in its
/// `[actualStart, end]`; hits whose window membership that uncertainty (plus the profile's edge
/// tolerance) leaves open are counted as **ambiguous** rather than judged.
///
/// - Fixed window (@nestjs/throttler): a key's window opens at its first hit and lasts the window
///   length. In each window: **too lenient** = hits that passed beyond the limit; **too strict** =
///   429s while fewer than `limit` hits could have been counted; **wrong N** = a 429 whose `N`
///   is outside `ceil(seconds left in the window)` for any admissible arrival time.
/// - Sliding window: a hit passes when fewer than `limit` passed hits arrived in the preceding
///   window length; each hit is judged against the passed hits that certainly / possibly fall in
///   its window; `N` must lie in `1…ceil(window)`.
/// - **Wrong message**: a 429 whose body gave no parseable `N` (counted in every algorithm).
/// - **Use before the run** (``Bucket/priorUse``, not a finding; a remote backend only: the run's own
///   embedded emulator starts empty, ``VerdictContext/bucketsStartEmpty``): a key may hold hits from
///   before the run (an earlier run against the same emulator, another client of a shared
///   backend), so a correct server rejects early in the key's first window. The server's `N`
///   says when its window, or the oldest hit in its log, runs out: at most `N` seconds after the
///   429's latest arrival. A 429 that too few run hits explain and whose `end + N` falls clearly
///   (beyond the edge tolerance) before the oracle's own first close (fixed: the key's first start
///   plus the window) or before the run's first hit plus the window (sliding: its oldest logged
///   hit predates the run) counts as prior use. A fixed window is then re-anchored to close when
///   the server's does (where `(start + N - 1, end + N]` of those 429s meet) and everything after
///   is judged as usual; within the tolerance of the bound the 429 is ambiguous. A 429 whose `N`
///   agrees with the oracle's window is judged against that window, so an early-rejecting server with its
///   window starting at the run's first hit is still too strict.
package struct LimitOracleVerdict: Verdict {
    /// The verdict for one declared bucket.
    package struct Bucket: Sendable, Codable, Equatable {
        package var declared: DeclaredLimit
        package var endpoints: [ContractEndpoint]
        /// Distinct bucket keys seen (client IPs, or 1 for the API key).
        package var keys = 0
        /// Fixed windows opened (0 for the sliding window).
        package var windows = 0
        package var accepted = 0
        package var rejected = 0
        /// Hits without a response or answered 5xx: maybe counted by the server.
        package var uncertain = 0
        package var tooLenient = 0
        package var tooStrict = 0
        package var wrongMessage = 0
        package var wrongN = 0
        package var ambiguous = 0
        /// 429s explained by use of the bucket before the run (a previous run, another client):
        /// their `N` shows the server's window, or its oldest counted hit, began before the
        /// run's first hit on the key. Not a finding against the server.
        package var priorUse = 0
        /// At least one 429 was seen, so the limit was actually exercised.
        package var reachedLimit: Bool { rejected > 0 }
        /// The limiter family that explains the server's answers (``LimiterFamilyFit``), `nil`
        /// when none does; the counts above are judged against it.
        package var family: LimiterFamily?
        /// The limit the family explains every answer with, when not the declared one (the
        /// server is then too lenient or too strict by that much).
        package var familyLimit: Int?
        /// Every family with no mismatch (several when the run cannot tell them apart).
        package var familiesFitting: [LimiterFamily] = []
        /// Each family's fit, in ``LimiterFamily/allCases`` order.
        package var familyScores: [LimiterFamilyScore] = []
        /// The server keys the bucket otherwise than declared; the counts above are then judged
        /// under the key that fits.
        package var keyMismatch: LimitKeyMismatch?
        /// The limit was exercised and every judged hit matched the declaration, on the declared key.
        package var enforcedExactly: Bool {
            reachedLimit && tooLenient + tooStrict + wrongMessage + wrongN == 0 && keyMismatch == nil
        }
        /// The first findings, at most the profile's offender count.
        package var examples: [Finding] = []

        package init(declared: DeclaredLimit, endpoints: [ContractEndpoint]) {
            self.declared = declared
            self.endpoints = endpoints
        }

        private enum CodingKeys: String, CodingKey {
            case declared, endpoints, keys, windows, accepted, rejected, uncertain, tooLenient, tooStrict
            case wrongMessage, wrongN, ambiguous, priorUse, reachedLimit, enforcedExactly, examples
            case family, familyLimit, familiesFitting, familyScores, keyMismatch
        }

        package init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            declared = try c.decode(DeclaredLimit.self, forKey: .declared)
            endpoints = try c.decode([ContractEndpoint].self, forKey: .endpoints)
            keys = try c.decode(Int.self, forKey: .keys)
            windows = try c.decode(Int.self, forKey: .windows)
            accepted = try c.decode(Int.self, forKey: .accepted)
            rejected = try c.decode(Int.self, forKey: .rejected)
            uncertain = try c.decode(Int.self, forKey: .uncertain)
            tooLenient = try c.decode(Int.self, forKey: .tooLenient)
            tooStrict = try c.decode(Int.self, forKey: .tooStrict)
            wrongMessage = try c.decode(Int.self, forKey: .wrongMessage)
            wrongN = try c.decode(Int.self, forKey: .wrongN)
            ambiguous = try c.decode(Int.self, forKey: .ambiguous)
            // Summaries written before prior use was told apart have no such field.
            priorUse = try c.decodeIfPresent(Int.self, forKey: .priorUse) ?? 0
            examples = try c.decode([Finding].self, forKey: .examples)
            // Summaries written before the oracle fitted families have none of these.
            family = try c.decodeIfPresent(LimiterFamily.self, forKey: .family)
            familyLimit = try c.decodeIfPresent(Int.self, forKey: .familyLimit)
            familiesFitting = try c.decodeIfPresent([LimiterFamily].self, forKey: .familiesFitting) ?? []
            familyScores = try c.decodeIfPresent([LimiterFamilyScore].self, forKey: .familyScores) ?? []
            keyMismatch = try c.decodeIfPresent(LimitKeyMismatch.self, forKey: .keyMismatch)
        }

        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(declared, forKey: .declared)
            try c.encode(endpoints, forKey: .endpoints)
            try c.encode(keys, forKey: .keys)
            try c.encode(windows, forKey: .windows)
            try c.encode(accepted, forKey: .accepted)
            try c.encode(rejected, forKey: .rejected)
            try c.encode(uncertain, forKey: .uncertain)
            try c.encode(tooLenient, forKey: .tooLenient)
            try c.encode(tooStrict, forKey: .tooStrict)
            try c.encode(wrongMessage, forKey: .wrongMessage)
            try c.encode(wrongN, forKey: .wrongN)
            try c.encode(ambiguous, forKey: .ambiguous)
            try c.encode(priorUse, forKey: .priorUse)
            try c.encode(reachedLimit, forKey: .reachedLimit)
            try c.encode(enforcedExactly, forKey: .enforcedExactly)
            try c.encode(examples, forKey: .examples)
            try c.encodeIfPresent(family, forKey: .family)
            try c.encodeIfPresent(familyLimit, forKey: .familyLimit)
            try c.encode(familiesFitting, forKey: .familiesFitting)
            try c.encode(familyScores, forKey: .familyScores)
            try c.encodeIfPresent(keyMismatch, forKey: .keyMismatch)
        }
    }

    /// One judged hit that broke the declaration.
    package struct Finding: Sendable, Codable, Equatable {
        package var kind: LimitFinding
        package var key: String
        package var device: String
        package var callId: UInt64
        package var attempt: Int
        /// The attempt's actual start, seconds since run start.
        package var at: Double
        package var detail: String
    }

    package var algorithm: VerdictsConfiguration.WindowAlgorithm
    /// Bucket name → verdict. Empty when the profile declares no limits.
    package var buckets: [String: Bucket]
    /// Declared buckets that could not be judged (unknown name), with the reason.
    package var errors: [String]

    /// Replays `attempts` against every declared limit of `configuration`.
    package static func evaluate(_ attempts: [AttemptRecord], configuration: VerdictsConfiguration)
        -> LimitOracleVerdict
    {
        Verdicts.run(Self.self, attempts: attempts, context: VerdictContext(configuration: configuration))
    }

    package static let key = "limits"

    static let totalsSuffixes = LimitFinding.allCases.map(\.rawValue) + ["ambiguous", "prior_use", "key_mismatch"]

    package static var metricPatterns: [MetricPattern] {
        [
            MetricPattern("limits", .oneOf(totalsSuffixes + ["declaration_errors", "family_undeclared"])),
            MetricPattern(
                "limits", .anyName,
                .oneOf(["accepted", "rejected", "uncertain", "windows", "exact", "family_declared"] + totalsSuffixes)),
        ]
    }

    package static func makePass(_ context: VerdictContext) -> Pass {
        Pass(
            configuration: context.configuration, horizonSeconds: context.horizonSeconds,
            bucketsStartEmpty: context.bucketsStartEmpty, runStartEpoch: context.runStartEpoch)
    }

    package var notExercised: [String: String] {
        var result: [String: String] = [:]
        for (name, bucket) in buckets where !bucket.reachedLimit && bucket.tooLenient == 0 {
            result["limits.\(name)"] =
                "the \(name) limit (\(bucket.declared)) was never reached: no 429 and no hit over it"
        }
        if !buckets.isEmpty && result.count == buckets.count {
            result["limits"] = "no declared limit was reached"
        }
        return result
    }

    /// Collects each declared bucket's hits per bucket key (compact: times, status, `N`), then
    /// replays the windows at the end.
    /// Replays each key's hits as the stream goes: a window (fixed) or a hit (sliding) is judged
    /// once every hit that could share it is known, then the hits nobody needs any more are
    /// dropped. Every hit starting before the watermark (latest attempt end minus the horizon,
    /// ``VerdictContext/horizonSeconds``: no attempt lasts longer) is known.
    package struct Pass: VerdictPass {
        /// One key's hits still needed, sorted by start.
        struct KeyState {
            package var hits: [LimitReplay.Hit] = []
            /// Sliding window: whether each hit of `hits` is judged already.
            package var judged: [Bool] = []
            package var fixed = LimitReplay.FixedWindowState()
            /// The earliest start of the key's hits in the run (run seconds).
            var firstStart = Double.infinity
        }

        let configuration: VerdictsConfiguration
        let horizon: Double
        var buckets: [(name: String, declared: DeclaredLimit, endpoints: [ContractEndpoint])] = []
        var errors: [String] = []
        var replays: [LimitReplay] = []
        /// Per bucket: the fit of its answers to each limiter family.
        var families: [LimitFamilyCollector] = []
        /// Bucket index → bucket key → what is still open.
        var keys: [[String: KeyState]] = []
        /// The latest attempt end seen (run seconds) and when the replays last ran.
        var latestEnd = -Double.infinity
        var lastReplay = -Double.infinity

        /// `bucketsStartEmpty`: see ``VerdictContext/bucketsStartEmpty``.
        /// `runStartEpoch`: the run's start, seconds since the Unix epoch (clock-aligned families).
        package init(
            configuration: VerdictsConfiguration, horizonSeconds: Double = .infinity, bucketsStartEmpty: Bool = false,
            runStartEpoch: Double = 0
        ) {
            self.configuration = configuration
            horizon = horizonSeconds
            for (name, declared) in configuration.limits.sorted(by: { $0.key < $1.key }) {
                do {
                    let endpoints = try LimitBucket.endpoints(of: name)
                    buckets.append((name, declared, endpoints))
                    var replay = LimitReplay(
                        declared: declared,
                        tolerance: configuration.edgeToleranceSeconds + 0.0005 * declared.windowSeconds,
                        maxExamples: max(0, configuration.worstOffenderCount), bucketsStartEmpty: bucketsStartEmpty)
                    replay.bucket = Bucket(declared: declared, endpoints: endpoints)
                    replays.append(replay)
                    families.append(
                        LimitFamilyCollector(
                            declared: declared, tolerance: replay.tolerance, maxExamples: replay.maxExamples,
                            runStartEpoch: runStartEpoch))
                } catch {
                    errors.append(String(describing: error))
                }
            }
            keys = Array(repeating: [:], count: buckets.count)
        }

        /// Hits held across every bucket and key (bounded by the horizon and the rate).
        package var retained: Int { keys.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.hits.count } } }

        package mutating func consume(_ record: RunRecord) {
            guard case .attempt(let attempt) = record else { return }
            for (index, bucket) in buckets.enumerated() where bucket.endpoints.contains(attempt.endpoint) {
                let key = bucket.declared.scope == .ip ? (attempt.clientIP ?? "socket-peer") : "api-key"
                let hit = LimitReplay.Hit(attempt)
                replays[index].tally([hit])
                families[index].add(attempt, key: key)
                inPlace(&keys[index][key, default: KeyState()]) { state in
                    // Hits come by end; keep them sorted by start (a late one is rare and near the end).
                    var position = state.hits.count
                    while position > 0, Self.before(hit, state.hits[position - 1]) { position -= 1 }
                    state.hits.insert(hit, at: position)
                    state.judged.insert(false, at: position)
                    state.firstStart = min(state.firstStart, hit.start)
                }
            }
            if attempt.end.isFinite { latestEnd = max(latestEnd, attempt.end) }
            if horizon.isFinite, latestEnd - lastReplay >= max(1, horizon / 8) {
                lastReplay = latestEnd
                replay(watermark: latestEnd - horizon)
            }
        }

        /// Start order of hits (then end).
        static func before(_ a: LimitReplay.Hit, _ b: LimitReplay.Hit) -> Bool { (a.start, a.end) < (b.start, b.end) }

        /// Replays every key as far as `watermark` allows and drops the hits no longer needed.
        private mutating func replay(watermark: Double) {
            for index in buckets.indices {
                families[index].replay(watermark: watermark)
                let ttl = buckets[index].declared.windowSeconds
                let tolerance = replays[index].tolerance
                for key in keys[index].keys.sorted() {
                    guard var state = keys[index].removeValue(forKey: key) else { continue }
                    switch configuration.algorithm {
                    case .fixedWindow:
                        replays[index].fixedWindow(&state.hits, key: key, state: &state.fixed, watermark: watermark)
                        state.judged = Array(repeating: false, count: state.hits.count)
                    case .slidingWindow:
                        let judged = state.judged
                        let hits = state.hits
                        replays[index].slidingWindow(hits, key: key, runStart: state.firstStart) {
                            !judged[$0] && hits[$0].end < watermark
                        }
                        for position in state.hits.indices where hits[position].end < watermark {
                            state.judged[position] = true
                        }
                        // A judged hit is still needed while an unjudged one (or one to come) may
                        // share its window.
                        let openFrom = zip(hits, state.judged).filter { !$0.1 }.map(\.0.start).min() ?? watermark
                        let needed = min(openFrom, watermark) - ttl - tolerance
                        let keep = zip(hits, state.judged).map { !$0.1 || $0.0.end >= needed }
                        state.hits = zip(hits, keep).filter(\.1).map(\.0)
                        state.judged = zip(state.judged, keep).filter(\.1).map(\.0)
                    }
                    // The key stays known (for the key count) even with nothing left to replay.
                    keys[index][key] = state
                }
            }
        }

        package mutating func finish() -> LimitOracleVerdict {
            replay(watermark: .infinity)
            var result: [String: Bucket] = [:]
            for (index, bucket) in buckets.enumerated() {
                var finished = replays[index].finishedBucket()
                finished.keys = keys[index].count
                let declaredFamily = LimiterFamily(configuration.algorithm)
                let (fit, keyMismatch) = families[index].finish(declaredFamily: declaredFamily)
                finished.judge(fit, keyMismatch: keyMismatch, declaredFamily: declaredFamily) {
                    families[index].examples(of: $0)
                }
                result[bucket.name] = finished
            }
            return LimitOracleVerdict(algorithm: configuration.algorithm, buckets: result, errors: errors)
        }
    }

    package func addMetrics(to metrics: inout [String: Double]) {
        var totals: [String: Int] = [:]
        for (name, bucket) in buckets {
            let values: [(String, Int)] = [
                ("accepted", bucket.accepted), ("rejected", bucket.rejected), ("uncertain", bucket.uncertain),
                ("windows", bucket.windows), ("too_lenient", bucket.tooLenient), ("too_strict", bucket.tooStrict),
                ("wrong_message", bucket.wrongMessage), ("wrong_n", bucket.wrongN), ("ambiguous", bucket.ambiguous),
                ("prior_use", bucket.priorUse),
            ]
            for (metric, value) in values {
                metrics["limits.\(name).\(metric)"] = Double(value)
                totals[metric, default: 0] += value
            }
            metrics["limits.\(name).exact"] = bucket.enforcedExactly ? 1 : 0
            metrics["limits.\(name).key_mismatch"] = bucket.keyMismatch == nil ? 0 : 1
            totals["key_mismatch", default: 0] += bucket.keyMismatch == nil ? 0 : 1
            let declared = LimiterFamily(algorithm)
            let asDeclared = bucket.family == declared || bucket.familiesFitting.contains(declared)
            metrics["limits.\(name).family_declared"] = asDeclared ? 1 : 0
            totals["family_undeclared", default: 0] += asDeclared ? 0 : 1
        }
        guard !buckets.isEmpty else { return }
        for metric in Self.totalsSuffixes {
            metrics["limits.\(metric)"] = Double(totals[metric] ?? 0)
        }
        metrics["limits.declaration_errors"] = Double(errors.count)
        metrics["limits.family_undeclared"] = Double(totals["family_undeclared"] ?? 0)
    }
}
