extension SoakRecorder {
    /// Counters for the progress line (``ProgressTally``) at run second `now`, as the events
    /// applied so far made them.
    package func progressCounters(at now: Double) -> ProgressCounters {
        state.withLock { $0.consumers.progress.counters(at: now) }
    }

    /// Journeys started late so far, as the events applied so far counted them.
    package func progressLateStarts() -> Int {
        state.withLock { $0.consumers.progress.lateStarts }
    }
}
