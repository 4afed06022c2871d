import SoakVerdicts

/// Where the back-off chart draws its early and late boundaries: the profile's
/// `expect.backoffEarlySlackSeconds` and `expect.backoffToleranceSeconds`, the same the back-off
/// verdict judged with.
package struct BackoffTolerances: Sendable, Equatable {
    /// A retry shorter than the asked wait by more than this is early, seconds.
    package var earlySlackSeconds: Double
    /// A retry longer than the asked wait by more than this is late, seconds.
    package var lateToleranceSeconds: Double

    /// The verdict's defaults.
    package init() {
        self.init(VerdictsConfiguration())
    }

    package init(earlySlackSeconds: Double, lateToleranceSeconds: Double) {
        self.earlySlackSeconds = earlySlackSeconds
        self.lateToleranceSeconds = lateToleranceSeconds
    }

    /// The tolerances a profile's `expect` judged with.
    package init(_ expect: VerdictsConfiguration) {
        self.init(
            earlySlackSeconds: expect.backoffEarlySlackSeconds, lateToleranceSeconds: expect.backoffToleranceSeconds)
    }
}
