import SoakRecords

extension OutagePlan {
    /// The plan of `profile`'s `backend.faults.outages` that cut `/data` (by name or by cutting
    /// everything); `nil` when there is none or the backend section does not decode.
    package static func of(_ profile: SoakProfile) -> OutagePlan? {
        guard let configuration = try? EmbeddedBackend.configuration(for: profile) else { return nil }
        let windows = configuration.faults.outages.filter { $0.endpoints?.contains("data") ?? true }.map {
            Window(startSeconds: $0.startSeconds, endSeconds: $0.endSeconds, mode: $0.mode.rawValue)
        }
        guard !windows.isEmpty else { return nil }
        return OutagePlan(
            windows: windows,
            worstCaseSeconds: worstCase(timeout: profile.sdk.timeout, maxRetries: profile.sdk.maxRetries))
    }
}
