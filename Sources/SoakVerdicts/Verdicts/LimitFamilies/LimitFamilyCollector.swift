import SoakRecords

/// Fits one declared bucket's answers to every ``LimiterFamily`` (at the declared limit and the
/// ``LimiterFamilyFit/candidateLimits(around:)``), under the declared key and under one key
/// shared by every client (``LimitKeyMismatch``), as the records stream.
///
/// Hits are replayed in arrival order (the middle of `[actualStart, end]`): they are buffered
/// until the watermark (no attempt still to come starts before it) passes them. Hits without a
/// response or answered 5xx are uncertain (``LimiterObservation/uncertain``).
struct LimitFamilyCollector {
    let declared: DeclaredLimit
    let runStartEpoch: Double
    let alternateScope: LimitKeyMismatch.Scope
    private var declaredReplays: [LimiterFamilyReplay]
    private var alternateReplays: [LimiterFamilyReplay]
    private var pending: [(hit: LimiterObservation, alternateKey: String)] = []
    private var declaredKeys: Set<String> = []

    init(declared: DeclaredLimit, tolerance: Double, maxExamples: Int, runStartEpoch: Double) {
        self.declared = declared
        self.runStartEpoch = runStartEpoch
        alternateScope = .shared
        // Each family at the declared limit (with examples), then at the limits near it.
        let limits = [declared.limit] + LimiterFamilyFit.candidateLimits(around: declared.limit)
        declaredReplays = limits.flatMap { limit in
            LimiterFamily.allCases.map {
                LimiterFamilyReplay(
                    family: $0, declared: declared, limit: limit, tolerance: tolerance,
                    maxExamples: limit == declared.limit ? maxExamples : 0)
            }
        }
        alternateReplays = LimiterFamily.allCases.map {
            LimiterFamilyReplay(family: $0, declared: declared, tolerance: tolerance)
        }
    }

    /// Buffers one attempt on the bucket under its declared key.
    mutating func add(_ attempt: AttemptRecord, key: String) {
        var hit = LimiterObservation(
            key: key, earliest: runStartEpoch + attempt.actualStart,
            latest: runStartEpoch + max(attempt.end, attempt.actualStart), admitted: attempt.status != 429,
            retryAfterSeconds: attempt.retryAfterSeconds)
        hit.uncertain = attempt.status.map { (500..<600).contains($0) } ?? true
        hit.device = attempt.device
        hit.callId = attempt.callId
        hit.attempt = attempt.attempt
        hit.runSeconds = attempt.actualStart
        declaredKeys.insert(key)
        pending.append((hit, "every-client"))
    }

    /// Replays the buffered hits that arrived before `watermark` (run seconds).
    mutating func replay(watermark: Double) {
        let bound = runStartEpoch + watermark
        pending.sort { $0.hit.middle < $1.hit.middle }
        let ready = pending.prefix { $0.hit.middle < bound }
        for (hit, alternateKey) in ready {
            for index in declaredReplays.indices { declaredReplays[index].observe(hit) }
            var alternate = hit
            alternate.key = alternateKey
            for index in alternateReplays.indices { alternateReplays[index].observe(alternate) }
        }
        pending.removeFirst(ready.count)
    }

    /// The fit under the declared key, and a key mismatch when one shared key explains the
    /// answers clearly better (at most half the declared key's mismatches, and the declared
    /// key misses some; only a bucket with several declared keys can tell). Replays what is
    /// still buffered first.
    mutating func finish(declaredFamily: LimiterFamily) -> (fit: LimiterFamilyFit, keyMismatch: LimitKeyMismatch?) {
        replay(watermark: .infinity)
        let fit = LimiterFamilyFit(
            scores: declaredReplays.map(\.score), limit: declared.limit, declared: declaredFamily)
        let alternate = LimiterFamilyFit(
            scores: alternateReplays.map(\.score), limit: declared.limit, declared: declaredFamily)
        // Only a bucket with several keys on one side can tell the two scopes apart.
        guard declaredKeys.count > 1, let declaredBest = fit.closest, declaredBest.mismatches > 0,
            let family = alternate.family, let alternateBest = alternate.score(of: family),
            alternateBest.mismatches * 2 < declaredBest.mismatches
        else { return (fit, nil) }
        let mismatch = LimitKeyMismatch(
            declared: declared.scope == .ip ? .ip : .key, fitting: alternateScope, family: family,
            declaredTooStrict: declaredBest.tooStrict, declaredTooLenient: declaredBest.tooLenient)
        return (alternate, mismatch)
    }

    /// The findings of `family`'s replay under the declared key.
    func examples(of family: LimiterFamily) -> [LimitOracleVerdict.Finding] {
        declaredReplays.first { $0.family == family && $0.score.limit == declared.limit }?.examples ?? []
    }
}
