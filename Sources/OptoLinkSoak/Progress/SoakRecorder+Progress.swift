extension SoakRecorder {
    /// Counters for the progress line (``ProgressTally``), as the events applied so far made them.
    package func progressCounters() -> (requests: Int, status429: Int, errors: Int, done: Int, p99: Double) {
        state.withLock { $0.consumers.progress.counters }
    }

    /// Journeys started late so far, as the events applied so far counted them.
    package func progressLateStarts() -> Int {
        state.withLock { $0.consumers.progress.lateStarts }
    }
}
