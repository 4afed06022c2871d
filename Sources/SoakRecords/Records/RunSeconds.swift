/// Run times as reports hold them: seconds since the run started.
package enum RunSeconds {
    /// Whether `seconds` can be a run time read back from a report: finite and within ±10⁹ s
    /// (about 31 years). Charts and bins leave out anything else (a hand-edited or damaged CSV).
    package static func isPlausible(_ seconds: Double) -> Bool { seconds.isFinite && abs(seconds) < 1e9 }
}
