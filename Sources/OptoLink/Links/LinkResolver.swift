import Foundation

/// Resolves a Universal Link through `GET /{orgKey}/{shortCode}/data?deviceId=…`
/// (docs/CONTRACT.md §1) into a `.direct`/`.exact` link.
///
/// A failure falls back in this order: the cached route of the same URL when the route cache
/// is on and the failure says nothing about the link itself (no connection, a timeout, a 5xx,
/// a 429 after the retries, a malformed 200 body); else the raw link. A 404 or 410 says the
/// link is gone or expired: it deletes the cached route and always yields the raw link.
struct LinkResolver: Sendable {
    let api: OptoLinkAPIClient
    let orgKey: String
    let deviceId: String
    let log: OptoLinkLog
    /// The instance's route cache; `nil` when ``OptoLinkConfig/routeCache`` is off.
    var cache: RouteCache? = nil

    /// Never throws: a failed resolution yields the cached route or the raw link, and a warning.
    func resolve(_ url: URL, shortCode: String) async -> OptoLinkData {
        do {
            let response = try await api.linkData(orgKey: orgKey, shortCode: shortCode, deviceId: deviceId)
            guard let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any],
                let path = object["path"] as? String
            else {
                return fallback(url, shortCode, because: "/data returned a malformed body", error: nil)
            }
            log.info("link: resolved \(shortCode)")
            let link = OptoLinkData(
                linkId: object["linkId"] as? String, path: path,
                params: DeferredMatchWire.flatParams(object["params"]),
                matchMethod: .direct, confidence: .exact, isDeferred: false, score: nil, source: .resolved)
            cache?.remember(link, for: url)
            return link
        } catch let error as OptoLinkApiError where error.status == 404 || error.status == 410 {
            if cache?.evict(url) == true {
                log.info("link: \(shortCode) is gone (\(error.status)); cached route deleted")
            }
            log.warning("link: resolving \(shortCode) failed; emitting the raw link", error: error)
            return IncomingLink.rawData(for: url)
        } catch let error as OptoLinkApiError where !(error.status == 429 || error.status >= 500) {
            log.warning("link: resolving \(shortCode) failed; emitting the raw link", error: error)
            return IncomingLink.rawData(for: url)
        } catch {
            return fallback(url, shortCode, because: "resolving \(shortCode) failed", error: error)
        }
    }

    /// The cached route for `url` when there is a fresh one, else the raw link.
    private func fallback(_ url: URL, _ shortCode: String, because reason: String, error: (any Error)?)
        -> OptoLinkData
    {
        if let cached = cache?.route(for: url) {
            log.warning("link: \(reason); emitting the cached route", error: error)
            return cached
        }
        log.warning("link: \(reason); emitting the raw link", error: error)
        return IncomingLink.rawData(for: url)
    }
}
