extension SoakSummary {
    /// What the load generator's process spent while the run drove its journeys
    /// (`summary.json` `run.generator`): CPU seconds against the cores the wall time offered.
    package struct GeneratorUse: Sendable, Codable, Equatable {
        /// User + system CPU seconds of the process from the first journey to the end of the last.
        package var cpuSeconds: Double
        /// Wall seconds over which ``cpuSeconds`` was spent.
        package var wallSeconds: Double
        /// Cores the process could run on.
        package var cores: Int
        /// `true` when the embedded emulator ran in the same process, so its CPU is in ``cpuSeconds``.
        package var withEmbeddedBackend: Bool

        package init(cpuSeconds: Double, wallSeconds: Double, cores: Int, withEmbeddedBackend: Bool) {
            self.cpuSeconds = cpuSeconds
            self.wallSeconds = wallSeconds
            self.cores = cores
            self.withEmbeddedBackend = withEmbeddedBackend
        }

        /// CPU seconds per wall second per core (1 = every core busy the whole time).
        package var share: Double {
            wallSeconds > 0 && cores > 0 ? cpuSeconds / (wallSeconds * Double(cores)) : 0
        }
    }
}
