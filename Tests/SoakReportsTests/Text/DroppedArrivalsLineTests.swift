import SoakRecords
import SoakReports
import SoakVerdicts
import Testing

/// The summary line on the open model's planned journeys that never started.
@Suite("dropped arrivals line")
struct DroppedArrivalsLineTests {
    @Test("the closed model drops nothing and says so")
    func closedModelText() {
        var journeys = SoakSummary.JourneySummary(
            scheduled: 4, started: 4, completed: 4, unfinished: 0, lateStarts: 0, lateThresholdSeconds: 0.1,
            startLag: HistogramSummary(LatencyHistogram()), byName: [:])
        #expect(DroppedArrivalsLine.render(journeys, loadModel: "closed").contains("closed model"))
        journeys.dropped = 3
        #expect(DroppedArrivalsLine.render(journeys, loadModel: "open").hasPrefix("journeys dropped: 3 of 4 planned"))
    }
}
