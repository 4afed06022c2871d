/// How well one limiter family explains a bucket's answers: the hits it would have answered
/// otherwise, and the 429s whose `N` it would not have sent.
package struct LimiterFamilyScore: Sendable, Codable, Equatable {
    package var family: LimiterFamily
    /// The limit per window the family was replayed with.
    package var limit: Int
    /// Answered hits replayed (passes and 429s).
    package var judged = 0
    /// The 429s among them.
    package var rejected = 0
    /// Passes the family would have rejected.
    package var tooLenient = 0
    /// 429s the family would have passed.
    package var tooStrict = 0
    /// 429s the family also rejects whose `N` is outside what it implies.
    package var wrongN = 0

    package init(family: LimiterFamily, limit: Int) {
        self.family = family
        self.limit = limit
    }

    /// Pairs of a pass and a 429 the family would have answered the other way round, whose
    /// arrival intervals overlap: the server may have seen them in the other order, so neither
    /// counts as a mismatch.
    package var swapped = 0

    /// Hits the family would have answered otherwise.
    package var mismatches: Int { tooLenient + tooStrict }
}
