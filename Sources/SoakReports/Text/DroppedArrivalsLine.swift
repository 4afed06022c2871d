import SoakVerdicts

/// The `summary.txt` line on arrivals the open model planned and never started.
package enum DroppedArrivalsLine {
    /// "journeys dropped: N of M planned (…)" in the open model; in the closed model a line
    /// saying it drops none, since it plans no arrivals (each worker starts its next journey
    /// when the last one ends).
    package static func render(_ journeys: SoakSummary.JourneySummary, loadModel: String) -> String {
        guard let dropped = journeys.dropped else {
            return loadModel == "closed"
                ? "journeys dropped: none (closed model: workers loop journeys back to back, no arrival is planned)"
                : "journeys dropped: not counted in this report"
        }
        guard dropped > 0 else { return "journeys dropped: 0 of \(journeys.scheduled) planned" }
        return "journeys dropped: \(dropped) of \(journeys.scheduled) planned never started: they waited for a "
            + "load.maxInFlight slot or an idle device until the run ended (raise maxInFlight or devices, or "
            + "relax the threshold journeys.dropped)"
    }
}
