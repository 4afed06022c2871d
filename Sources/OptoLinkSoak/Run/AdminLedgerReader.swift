import Foundation
import OptoLinkHTTP
import SoakRecords
import SoakSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Reads a remote emulator's ledger from its `GET /__admin/ledger` (`run --ledger URL`): page by
/// page (`since` = the last sequence read), up to the run's end (`until`), so traffic after the
/// run is left out. The emulator stores a write before it answers it, so its ledger has caught up
/// when it is asked; with `adminToken` the request carries `Authorization: Bearer`.
enum AdminLedgerReader {
    /// Entries asked for per request.
    static let pageSize = 10_000
    /// The most pages read (a bound on the loop: 100 million entries).
    static let mostPages = 10_000

    /// `path` as an `http(s)://` URL, or `nil` for a file path.
    static func url(_ path: String) -> URL? {
        guard let url = URL(string: path), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            url.host != nil
        else { return nil }
        return url
    }

    /// Hands every entry up to `epoch` (seconds since 1970) to `body`, in sequence order; returns how many.
    /// - Throws: ``SoakProfileError`` naming the URL: no answer, a status other than 200, or a page
    ///   that is not a JSON array of ledger entries.
    static func read(
        _ url: URL, until epoch: Double, adminToken: String?, tls: TLSConfiguration, pageSize: Int = Self.pageSize,
        _ body: (LedgerRow) -> Void
    ) async throws -> Int {
        let client: HTTPClient
        do {
            client = try HTTPClient(configuration: .init(maxConnectionsPerHost: 1, tls: tls))
        } catch {
            throw SoakProfileError(message: "--ledger \(url.absoluteString): the HTTP client did not start: \(error)")
        }
        var since = 0
        var count = 0
        do {
            for _ in 0..<mostPages {
                let page = try await fetch(url, since: since, limit: pageSize, until: epoch, token: adminToken, client)
                page.forEach(body)
                count += page.count
                guard page.count == pageSize, let last = page.last else { break }
                since = last.sequence
            }
        } catch {
            await client.shutdown()
            throw error
        }
        await client.shutdown()
        return count
    }

    private static func fetch(
        _ url: URL, since: Int, limit: Int, until: Double, token: String?, _ client: HTTPClient
    ) async throws -> [LedgerRow] {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let kept = (components?.queryItems ?? []).filter { !["since", "after", "limit", "until"].contains($0.name) }
        components?.queryItems =
            kept + [
                URLQueryItem(name: "since", value: String(since)), URLQueryItem(name: "limit", value: String(limit)),
                URLQueryItem(name: "until", value: String(format: "%.6f", until)),
            ]
        guard let pageURL = components?.url else {
            throw SoakProfileError(message: "--ledger \(url.absoluteString): not a URL the ledger can be asked at")
        }
        var request = URLRequest(url: pageURL)
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        guard let (data, status) = await NativeBackendProbe.get(request, through: client) else {
            throw SoakProfileError(message: "--ledger \(url.absoluteString): no answer (is the emulator running?)")
        }
        guard status == 200 else {
            let hint = status == 401 ? " (pass the emulator's token: --admin-token-file FILE)" : ""
            throw SoakProfileError(message: "--ledger \(url.absoluteString): answered \(status)\(hint)")
        }
        do {
            return try JSONDecoder().decode([LedgerRow].self, from: data)
        } catch let error as DecodingError {
            throw SoakProfileError(message: "--ledger \(url.absoluteString): \(error.readableDescription)")
        }
    }
}
