extension LimitOracleVerdict.Bucket {
    /// Judges the bucket against the family that explains the server's answers.
    ///
    /// The declared family keeps the oracle's own replay (``LimitReplay``: edge ambiguity, use
    /// before the run), and is the family whenever that replay finds nothing wrong. Another family that explains the answers replaces the too-lenient,
    /// too-strict and wrong-`N` counts with its own: a correct clock-aligned window is exact,
    /// not "too lenient" against a window anchored at the first hit. With no family explaining
    /// the answers, the declared family's judgement stands. A key mismatch judges the bucket under
    /// the key that fits, so the declared key's misses are not breaches.
    mutating func judge(
        _ fit: LimiterFamilyFit, keyMismatch: LimitKeyMismatch?, declaredFamily: LimiterFamily,
        findings: (LimiterFamily) -> [LimitOracleVerdict.Finding]
    ) {
        familiesFitting = fit.fitting
        familyScores = fit.scores
        // The declared family's own replay is the careful one: when it finds nothing wrong, the
        // declared family explains the answers, whatever the coarser fit says.
        guard tooLenient + tooStrict + wrongN > 0 else {
            family = declaredFamily
            return
        }
        family = fit.family
        familyLimit = fit.fittedLimit
        self.keyMismatch = keyMismatch
        guard let chosen = fit.family, chosen != declaredFamily || keyMismatch != nil,
            let score = fit.score(of: chosen)
        else { return }
        tooLenient = score.tooLenient
        tooStrict = score.tooStrict
        wrongN = score.wrongN
        // The declared family's edge ambiguity and use before the run do not apply to another one.
        ambiguous = 0
        priorUse = 0
        examples = examples.filter { $0.kind == .wrongMessage } + (keyMismatch == nil ? findings(chosen) : [])
    }
}
