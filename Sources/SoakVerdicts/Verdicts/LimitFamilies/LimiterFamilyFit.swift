/// Which limiter family explains a bucket's answers, chosen from every family's scores (each
/// family replayed with the declared limit and a few others near it).
///
/// In this order:
/// - A family **fits** when it explains every pass and 429 with the declared limit
///   (``fitting``; several in an ambiguous run: every family fits a bucket whose limit was never
///   reached). The declared family is named when it fits.
/// - Otherwise a family that fits (the fewest wrong `N`s first, ties in
///   ``LimiterFamily/allCases`` order) over at least twice ``evidence`` 429s, or over fewer when
///   the declared family misses at least ``evidence`` hits: a correct limiter of another family.
/// - Otherwise the declared family when it misses at most one hit in twenty with the declared
///   limit or one near it (a few breaches, or edges its own replay resolves); ``fittedLimit``
///   names the limit it explains every answer with, if any.
/// - Otherwise a family that explains every answer, `N`s included and with no pair of hits
///   swapped (``LimiterFamilyScore/swapped``), with another limit (the
///   nearest to the declared one first, then the declared family), alone among the families at
///   that limit and over at least twice ``evidence`` 429s: ``fittedLimit`` says which,
///   and the bucket is judged against that family at the declared limit, so a too-lenient or
///   too-strict server of any family is caught as such.
/// - Otherwise no family explains the answers: ``family`` is `nil`.
package struct LimiterFamilyFit: Sendable, Codable, Equatable {
    /// The family that explains the answers, or `nil`.
    package var family: LimiterFamily?
    /// The limit the family explains every answer with, when that is not the declared one.
    package var fittedLimit: Int?
    /// Families with no mismatch at the declared limit, in ``LimiterFamily/allCases`` order.
    package var fitting: [LimiterFamily]
    /// Every family's score at the declared limit, in ``LimiterFamily/allCases`` order.
    package var scores: [LimiterFamilyScore]

    /// The fewest hits the declared family must miss before another family can be named: one
    /// or two breaches are breaches, not evidence of another algorithm.
    static let evidence = 3

    /// The share of hits the declared family may miss and still explain the answers.
    static let breachShare = 0.05

    /// `scores`: any number per family, one of them at `limit` (the declared limit).
    package init(scores all: [LimiterFamilyScore], limit: Int, declared: LimiterFamily) {
        func order(_ family: LimiterFamily) -> Int { LimiterFamily.allCases.firstIndex(of: family) ?? 0 }
        let atLimit = all.filter { $0.limit == limit }.sorted { order($0.family) < order($1.family) }
        scores = atLimit
        fittedLimit = nil
        guard (atLimit.map(\.judged).max() ?? 0) > 0 else {
            fitting = []
            family = nil
            return
        }
        fitting = atLimit.filter { $0.mismatches == 0 }.map(\.family)
        func rank(_ score: LimiterFamilyScore) -> (Int, Int, Int, Int) {
            (score.mismatches, score.wrongN, score.family == declared ? 0 : 1, order(score.family))
        }
        let share = { (score: LimiterFamilyScore) in
            score.mismatches <= max(1, Int(Double(score.judged) * Self.breachShare))
        }
        let exact = atLimit.filter { $0.mismatches == 0 }
        let declaredScore = atLimit.first { $0.family == declared }
        let elsewhere = all.filter {
            $0.limit != limit && $0.mismatches + $0.swapped + $0.wrongN == 0 && $0.judged > 0
        }
        func nearest(_ scores: [LimiterFamilyScore]) -> LimiterFamilyScore? {
            scores.min {
                (abs($0.limit - limit), $0.family == declared ? 0 : 1, order($0.family))
                    < (abs($1.limit - limit), $1.family == declared ? 0 : 1, order($1.family))
            }
        }
        let declaredMisses = declaredScore?.mismatches ?? 0
        if fitting.contains(declared) {
            family = declared
        } else if let best = exact.filter({ $0.rejected >= 2 * Self.evidence }).min(by: { rank($0) < rank($1) }) {
            family = best.family
        } else if declaredMisses < Self.evidence {
            family = declared
        } else if let best = exact.min(by: { rank($0) < rank($1) }) {
            family = best.family

        } else if all.contains(where: { $0.family == declared && $0.judged > 0 && share($0) }) {
            family = declared
            fittedLimit = nearest(elsewhere.filter { $0.family == declared })?.limit
        } else if let nearest = nearest(elsewhere), nearest.rejected >= 2 * Self.evidence,
            elsewhere.filter({ $0.limit == nearest.limit }).count == 1
        {
            family = nearest.family
            fittedLimit = nearest.limit
        } else {
            family = nil
        }
    }

    /// The score of `family` at the declared limit.
    package func score(of family: LimiterFamily) -> LimiterFamilyScore? { scores.first { $0.family == family } }

    /// The chosen family's score, or the one with the fewest mismatches when none explains.
    package var closest: LimiterFamilyScore? {
        if let family { return score(of: family) }
        return scores.min { ($0.mismatches, $0.wrongN) < ($1.mismatches, $1.wrongN) }
    }

    /// The limits besides the declared `limit` each family is also replayed with: one or two
    /// off, and half and double (distinct, at least 1).
    package static func candidateLimits(around limit: Int) -> [Int] {
        let others = [limit - 2, limit - 1, limit + 1, limit + 2, limit / 2, limit * 2]
        var seen: Set<Int> = [limit]
        return others.filter { $0 >= 1 && seen.insert($0).inserted }
    }
}
