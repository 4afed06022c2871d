/// The threshold every open-model run is judged by unless its profile says otherwise:
/// `journeys.dropped == 0`, since a planned arrival that never started is load the backend was
/// never shown, and a pass would claim it was.
///
/// A profile relaxes it by naming the metric itself (`"journeys.dropped <= 10"`). It joins the
/// thresholds only when it fails (some arrival was dropped), so a run without drops lists just
/// its profile's; the closed model plans no arrivals, so it never drops one.
package enum DroppedArrivalsThreshold {
    package static let expression = "journeys.dropped == 0"

    /// `specs` with the default appended when `dropped` (arrivals the open model dropped; `nil`
    /// in the closed model) is above 0 and no spec judges `journeys.dropped`.
    package static func adding(to specs: [ThresholdSpec], dropped: Int?) -> [ThresholdSpec] {
        guard let dropped, dropped > 0 else { return specs }
        let named = specs.contains { spec in
            guard case .success(let parsed) = Thresholds.parse(spec.expression) else { return false }
            return parsed.metric == "journeys.dropped"
        }
        return named ? specs : specs + [ThresholdSpec(expression)]
    }
}
