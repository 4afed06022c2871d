import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Checks, before a run, that the backend answers and that the profile's clicked links exist.
package enum BackendProbe {
    /// Any HTTP response from `GET /.well-known/apple-app-site-association` counts as reachable.
    /// - Throws: ``SoakProfileError`` "unreachable backend" when no response arrives.
    static func checkReachable(_ baseURL: URL, session: URLSession) async throws {
        var request = URLRequest(url: baseURL.appendingPathComponent(".well-known/apple-app-site-association"))
        request.timeoutInterval = 5
        do {
            _ = try await session.optoLinkData(for: request)
        } catch {
            throw SoakProfileError(
                message:
                    "unreachable backend \(baseURL.absoluteString): \(describe(error, timeout: request.timeoutInterval))"
            )
        }
    }

    /// A transport error in words (`timed out after 5 s`, `connection refused`), not `NSURLErrorDomain error -1001`.
    package static func describe(_ error: any Error, timeout: TimeInterval) -> String {
        let ns = error as NSError
        guard ns.domain == NSURLErrorDomain else { return error.localizedDescription }
        switch ns.code {
        case NSURLErrorTimedOut:
            return
                "timed out after \(Int(timeout)) s (no HTTP response: the server accepted but never answered, or the connection never completed)"
        case NSURLErrorCannotConnectToHost: return "connection refused (nothing listens there)"
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed:
            return "host not found (its name does not resolve here; fix the host in --base-url)"
        case NSURLErrorNetworkConnectionLost: return "connection lost before a response"
        case NSURLErrorNotConnectedToInternet: return "no network"
        case NSURLErrorBadURL:
            // FoundationNetworking refuses IPv6 literals (only [::1] is sent, as localhost).
            return "URLSession on Linux cannot send to an IPv6 literal other than [::1] "
                + "(swift-corelibs-foundation issue 5496); use a host name, or --transport native (URL error -1000)"
        case NSURLErrorSecureConnectionFailed, NSURLErrorServerCertificateUntrusted,
            NSURLErrorServerCertificateHasBadDate, NSURLErrorServerCertificateNotYetValid,
            NSURLErrorServerCertificateHasUnknownRoot:
            return "TLS failed (\(ns.localizedDescription))"
        default: return "\(ns.localizedDescription) (URL error \(ns.code))"
        }
    }

    /// Resolves every clicked short code to its link id with `GET /{org}/{code}/data`.
    /// Returns `org/code` → linkId.
    /// - Throws: ``SoakProfileError`` naming the step when the backend says the link does not exist (404/410).
    static func resolveClickedLinks(
        _ profile: SoakProfile, baseURL: URL, get: (URLRequest) async -> (Data, Int)?
    ) async throws -> [String: String] {
        var result: [String: String] = [:]
        for (j, journey) in profile.journeys.enumerated() {
            for (s, step) in journey.steps.enumerated() {
                guard case .click(let link, let org) = step else { continue }
                let orgKey = org ?? profile.sdk.orgKey
                let key = "\(orgKey)/\(link)"
                if result[key] != nil { continue }
                var components = URLComponents(
                    url: baseURL.appendingPathComponent(orgKey).appendingPathComponent(link).appendingPathComponent(
                        "data"),
                    resolvingAgainstBaseURL: false)
                components?.queryItems = [URLQueryItem(name: "deviceId", value: "soak-probe-00000000")]
                guard let url = components?.url else { continue }
                var request = URLRequest(url: url)
                request.setValue("198.18.0.1", forHTTPHeaderField: "X-Forwarded-For")
                guard let (data, status) = await get(request) else { continue }
                if status == 404 || status == 410 {
                    throw SoakProfileError(
                        message:
                            "journeys[\(j)].steps[\(s)].link: link \"\(key)\" does not exist on the backend (\(status))"
                    )
                }
                if status == 200, let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                    let linkId = object["linkId"] as? String
                {
                    result[key] = linkId
                }
            }
        }
        return result
    }
}
