import Foundation

/// Resolves a Universal Link through `GET /{orgKey}/{shortCode}/data?deviceId=…`
/// (docs/CONTRACT.md §1) into a `.direct`/`.exact` link; any failure falls back to the raw link.
struct LinkResolver: Sendable {
    let api: OptoLinkAPIClient
    let orgKey: String
    let deviceId: String
    let log: OptoLinkLog

    /// Never throws: a failed resolution yields the raw link and a warning.
    func resolve(_ url: URL, shortCode: String) async -> OptoLinkData {
        do {
            let response = try await api.linkData(orgKey: orgKey, shortCode: shortCode, deviceId: deviceId)
            guard let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any],
                let path = object["path"] as? String
            else {
                log.warning("link: /data for \(shortCode) returned a malformed body; emitting the raw link")
                return IncomingLink.rawData(for: url)
            }
            log.info("link: resolved \(shortCode)")
            return OptoLinkData(
                linkId: object["linkId"] as? String, path: path,
                params: DeferredMatchWire.flatParams(object["params"]),
                matchMethod: .direct, confidence: .exact, isDeferred: false, score: nil)
        } catch {
            log.warning("link: resolving \(shortCode) failed; emitting the raw link", error: error)
            return IncomingLink.rawData(for: url)
        }
    }
}
