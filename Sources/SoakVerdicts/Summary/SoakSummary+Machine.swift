extension SoakSummary {
    /// How busy the machine was around the run, as its kernel reports it (`summary.json`
    /// `run.machine`): evidence for `compare`, which does not take a latency shift measured on a
    /// busier machine for the backend's. Each field is `nil` where `/proc` does not offer it.
    package struct MachineLoad: Sendable, Codable, Equatable {
        /// The 1-minute load average when the driver started and when it stopped.
        package var loadAverageAtStart: Double?
        package var loadAverageAtEnd: Double?
        /// The share of the machine's CPU time a hypervisor took for other guests over the run.
        package var stealShare: Double?

        package init(loadAverageAtStart: Double?, loadAverageAtEnd: Double?, stealShare: Double?) {
            self.loadAverageAtStart = loadAverageAtStart
            self.loadAverageAtEnd = loadAverageAtEnd
            self.stealShare = stealShare
        }

        /// The higher of the two load averages (the run's own load is in both).
        package var peakLoadAverage: Double? { [loadAverageAtStart, loadAverageAtEnd].compactMap { $0 }.max() }
    }
}
