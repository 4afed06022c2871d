import SoakVerdicts
import Testing

/// The threshold an open-model run that dropped arrivals is judged by unless its profile names one.
@Suite("dropped arrivals threshold")
struct DroppedArrivalsThresholdTests {
    @Test("the default threshold joins open-model runs that dropped arrivals, unless the profile names the metric")
    func defaultThreshold() {
        let open = DroppedArrivalsThreshold.adding(to: ["http.failed == 0"], dropped: 5)
        #expect(open.map(\.expression) == ["http.failed == 0", "journeys.dropped == 0"])
        #expect(DroppedArrivalsThreshold.adding(to: ["journeys.dropped < 3"], dropped: 5).count == 1)
        #expect(DroppedArrivalsThreshold.adding(to: [], dropped: nil).isEmpty)
        #expect(DroppedArrivalsThreshold.adding(to: [], dropped: 0).isEmpty)
    }
}
