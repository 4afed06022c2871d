/// One bucket key's state under one limiter family, replayed over the server's answers.
///
/// Times are seconds since the Unix epoch (clock-aligned families need the wall clock). The
/// state follows what the server answered, not what the model predicted, so one breach does not
/// turn every later hit into a mismatch. For a fixed state, `admits(at:)` never turns from true
/// to false as `time` grows: a later arrival has at least as much room. The fit relies on that.
protocol LimiterModel: Sendable {
    /// Whether a hit arriving at `time` passes, given the hits recorded so far.
    func admits(at time: Double) -> Bool
    /// How long a hit rejected at `time` has to wait until one would pass, seconds (the `N` a
    /// correct server sends is this rounded up); 0 when one passes now.
    func secondsUntilAdmitted(at time: Double) -> Double
    /// Records a hit that arrived at `time` and how the server answered it.
    mutating func record(at time: Double, admitted: Bool)
}
