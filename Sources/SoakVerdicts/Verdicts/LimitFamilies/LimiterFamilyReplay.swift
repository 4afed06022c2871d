import SoakRecords

/// Replays a bucket's answered hits, in arrival order, under one limiter family and scores the
/// fit (``LimiterFamilyScore``): pure over the observations, one key's state per bucket key.
///
/// A hit reached the server somewhere in `earliest - tolerance … latest + tolerance`. A pass
/// agrees with the family when the family passes it at some time in that interval (it then counts
/// at the earliest such time); a 429 agrees when the family rejects it at some time there (it
/// counts at the latest). Because a later arrival never has less room (``LimiterModel``), the
/// interval's ends decide, and a binary search finds the time within it.
package struct LimiterFamilyReplay: Sendable {
    package let family: LimiterFamily
    let limit: Int
    let windowSeconds: Double
    let tolerance: Double
    let maxExamples: Int
    private var models: [String: (fewest: any LimiterModel, most: any LimiterModel)] = [:]
    /// One mismatch not yet paired with an opposite one. A 429 keeps the key's state it was
    /// judged against (`state`), with the passes replayed after it that may have come first counted in.
    private struct Unpaired {
        var kind: LimitFinding
        var earliest: Double
        var latest: Double
        var device: String
        var at: Double
        var state: (any LimiterModel)?
    }
    /// Per key, the latest mismatches not yet paired with an opposite one (at most a few).
    private var unpaired: [String: [Unpaired]] = [:]
    package private(set) var score: LimiterFamilyScore
    /// The first findings, at most `maxExamples`.
    package private(set) var examples: [LimitOracleVerdict.Finding] = []

    /// `limit`: the limit to replay with (default: the declared one).
    package init(
        family: LimiterFamily, declared: DeclaredLimit, limit: Int? = nil, tolerance: Double, maxExamples: Int = 0
    ) {
        self.family = family
        self.limit = limit ?? declared.limit
        windowSeconds = declared.windowSeconds
        self.tolerance = tolerance
        self.maxExamples = maxExamples
        score = LimiterFamilyScore(family: family, limit: self.limit)
    }

    /// Scores `observations` (any order; replayed by the middle of their intervals).
    package static func score(
        _ family: LimiterFamily, declared: DeclaredLimit, limit: Int? = nil, tolerance: Double,
        _ observations: [LimiterObservation]
    ) -> LimiterFamilyScore {
        var replay = LimiterFamilyReplay(family: family, declared: declared, limit: limit, tolerance: tolerance)
        for observation in observations.sorted(by: { $0.middle < $1.middle }) { replay.observe(observation) }
        return replay.score
    }

    /// Replays the next hit in arrival order.
    ///
    /// Each key has two states: `fewest` leaves uncertain hits out, `most` counts them as passes.
    /// A pass is too lenient only when even `fewest` rejects it; a 429 too strict only when even
    /// `most` passes it.
    package mutating func observe(_ hit: LimiterObservation) {
        let fresh = family.makeModel(limit: limit, windowSeconds: windowSeconds)
        var (fewest, most) = models[hit.key] ?? (fresh, fresh)
        defer { models[hit.key] = (fewest, most) }
        if hit.uncertain {
            most.record(at: hit.middle, admitted: true)
            return
        }
        let low = hit.earliest - tolerance
        let high = hit.latest + tolerance
        var time = hit.middle
        var agreedPass = false
        score.judged += 1
        if hit.admitted {
            let model = fewest
            if !model.admits(at: time) {
                if model.admits(at: high) {
                    time = Self.boundary(low: time, high: high) { model.admits(at: $0) }.passing
                } else if !pairs(.tooLenient, hit) {
                    score.tooLenient += 1
                    finding(.tooLenient, hit, "passed where a \(family.title) of \(limit) rejects")
                }
            } else {
                agreedPass = true
            }
        } else {
            score.rejected += 1
            let model = most
            var agrees = true
            if model.admits(at: time) {
                if !model.admits(at: low) {
                    time = Self.boundary(low: low, high: time) { model.admits(at: $0) }.failing
                } else {
                    agrees = false
                    if !pairs(.tooStrict, hit, state: model) {
                        score.tooStrict += 1
                        finding(.tooStrict, hit, "429 where a \(family.title) of \(limit) passes")
                    }
                }
            }
            if agrees, let n = hit.retryAfterSeconds {
                // The wait shrinks as the arrival moves later: the earliest arrival gives the most.
                // Uncertain hits may be counted or not: the wait lies between the two states'.
                let waits = [fewest, most].flatMap { state in
                    [
                        state.admits(at: high) ? 0 : state.secondsUntilAdmitted(at: high),
                        state.secondsUntilAdmitted(at: low),
                    ]
                }
                let bounds = waits.map { max(1, Int(min($0, 1e9).rounded(.up))) }
                let range = bounds.min()!...bounds.max()!
                if !range.contains(n) {
                    score.wrongN += 1
                    finding(.wrongN, hit, "N = \(n), a \(family.title) implies \(range.lowerBound)…\(range.upperBound)")
                }
            }
        }
        if agreedPass { excuseStrict(before: hit, state: most) }
        fewest.record(at: time, admitted: hit.admitted)
        most.record(at: time, admitted: hit.admitted)
    }

    /// A pass the family agrees with may still have taken the room 429s replayed ahead of it
    /// found free: when their intervals overlap, the server may have seen the pass first. Each
    /// such 429 keeps the state it was judged against; the pass is counted into it at the
    /// earliest time both could have arrived, and the 429 is explained once that state rejects it
    /// then. So one pass can explain several overlapping 429s (it took the last token or slot),
    /// and several passes one 429: under overload an interval spans more than one refill, and a
    /// replay by interval middles cannot know the server's order.
    private mutating func excuseStrict(before hit: LimiterObservation, state: any LimiterModel) {
        guard var open = unpaired[hit.key], !open.isEmpty else { return }
        let passLow = hit.earliest - tolerance
        let passHigh = hit.latest + tolerance
        var explained: [Unpaired] = []
        for index in open.indices {
            let entry = open[index]
            guard entry.kind == .tooStrict, entry.earliest - tolerance <= passHigh, passLow <= entry.latest + tolerance
            else { continue }
            var model = entry.state ?? state
            var time = max(entry.earliest - tolerance, passLow)
            let latest = min(entry.latest + tolerance, passHigh)
            if !model.admits(at: time) {
                guard model.admits(at: latest) else { continue }
                time = Self.boundary(low: time, high: latest) { model.admits(at: $0) }.passing
            }
            model.record(at: time, admitted: true)
            open[index].state = model
            if !model.admits(at: time) { explained.append(entry) }
        }
        open.removeAll { entry in explained.contains { $0.device == entry.device && $0.at == entry.at } }
        unpaired[hit.key] = open
        score.tooStrict -= explained.count
        score.swapped += explained.count
        examples.removeAll { example in
            example.kind == .tooStrict && explained.contains { $0.device == example.device && $0.at == example.at }
        }
    }

    /// Whether the mismatch `kind` of `hit` pairs with an opposite one of the same key whose
    /// interval overlaps: the two were answered in the other order than replayed, so the earlier
    /// one's count is taken back. Otherwise it is kept for a later hit to pair with.
    private mutating func pairs(
        _ kind: LimitFinding, _ hit: LimiterObservation, state: (any LimiterModel)? = nil
    ) -> Bool {
        var open = unpaired[hit.key, default: []]
        defer { unpaired[hit.key] = open }
        let opposite: LimitFinding = kind == .tooLenient ? .tooStrict : .tooLenient
        if let index = open.firstIndex(where: {
            $0.kind == opposite && $0.earliest - tolerance <= hit.latest && hit.earliest - tolerance <= $0.latest
        }) {
            let paired = open.remove(at: index)
            if opposite == .tooLenient { score.tooLenient -= 1 } else { score.tooStrict -= 1 }
            examples.removeAll { $0.kind == opposite && $0.device == paired.device && $0.at == paired.at }
            score.swapped += 1
            return true
        }
        open.append(
            Unpaired(
                kind: kind, earliest: hit.earliest, latest: hit.latest, device: hit.device, at: hit.runSeconds,
                state: state))
        if open.count > 8 { open.removeFirst() }
        return false
    }

    /// Where `passes` turns true in `low…high`, given it is false at `low`, true at `high`, and
    /// never turns false again as time grows: the last time found false and the first found true.
    static func boundary(low: Double, high: Double, _ passes: (Double) -> Bool) -> (failing: Double, passing: Double) {
        var low = low
        var high = high
        for _ in 0..<60 {
            let middle = (low + high) / 2
            guard middle > low && middle < high else { break }
            if passes(middle) { high = middle } else { low = middle }
        }
        return (low, high)
    }

    private mutating func finding(_ kind: LimitFinding, _ hit: LimiterObservation, _ detail: String) {
        guard examples.count < maxExamples else { return }
        examples.append(
            .init(
                kind: kind, key: hit.key, device: hit.device, callId: hit.callId, attempt: hit.attempt,
                at: hit.runSeconds, detail: detail))
    }
}
