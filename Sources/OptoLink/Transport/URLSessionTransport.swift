import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The default ``OptoLinkTransport``: one `URLSession` shared by every instance that uses it.
///
/// Create one and share it across instances; a session owns file descriptors and a
/// connection pool (on Linux every session also runs on one process-wide queue, so more
/// sessions do not add throughput). The SDK enforces its own per-attempt deadline on the
/// injected clock; the request's `timeoutInterval` is only a backstop one second later.
/// On Linux, requests run behind a cancellation shield, because cancelling a URLSession task
/// there can deadlock, and a request whose reused connection the server resets before any
/// answer fails at once as `URLError(.networkConnectionLost)` instead of waiting out the
/// timeout (see `URLSession.optoLinkData(for:)` and docs/LINUX.md §1).
///
/// - Throws: `URLError` when no HTTP response arrived (refused, reset, timed out,
///   cancelled); any other failure is reported as `URLError(.unknown)`. Non-2xx statuses
///   are returned as responses, never thrown (docs/CONTRACT.md §1, "Error envelope").
public final class URLSessionTransport: OptoLinkTransport {
    /// The session every request goes through.
    public let session: URLSession

    /// Wraps an existing session (the caller owns its configuration and lifetime).
    public init(session: URLSession = .shared) {
        self.session = session
    }

    /// Creates a transport over a new session built from `configuration`.
    ///
    /// - Parameters:
    ///   - configuration: the session configuration; `.ephemeral` (no cookies, no cache) by default.
    ///   - maximumConnectionsPerHost: caps parallel sockets per host (URLSession's default is 6);
    ///     `nil` keeps the configuration's value.
    public convenience init(
        configuration: URLSessionConfiguration = .ephemeral,
        maximumConnectionsPerHost: Int? = nil
    ) {
        if let maximumConnectionsPerHost {
            configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost
        }
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        self.init(session: URLSession(configuration: configuration))
    }

    /// The process-wide transport ``OptoLinkEnvironment/system`` uses: one ephemeral session.
    public static let shared = URLSessionTransport(configuration: .ephemeral)

    /// Sends `request` through ``session`` once, with a `timeoutInterval` one second past the
    /// SDK's own deadline (whole seconds, at least 2 s: URLSession truncates fractions on Linux).
    ///
    /// - Returns: the status, headers and body of any response, 2xx or not.
    /// - Throws: `URLError` when no response arrived: `.cannotConnectToHost` (refused),
    ///   `.networkConnectionLost` (reset or closed before the answer), `.timedOut`, `.cancelled`
    ///   (the calling task was cancelled); `.badServerResponse` for a non-HTTP response; any other
    ///   error as `.unknown`.
    public func send(_ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext) async throws
        -> OptoLinkHTTPResponse
    {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        // URLSession truncates timeouts to whole seconds (docs/LINUX.md §1); keep it a backstop
        // that fires after the SDK's own deadline.
        let seconds = context.attemptTimeout.seconds
        urlRequest.timeoutInterval = max(1, seconds.rounded(.up)) + 1

        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.optoLinkData(for: urlRequest)
        } catch let error as URLError {
            throw error
        } catch is CancellationError {
            throw URLError(.cancelled)
        } catch {
            throw URLError(.unknown)
        }
        guard let http = response as? HTTPURLResponse else {
            throw URLError(.badServerResponse)
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String {
                headers[name] = value
            }
        }
        return OptoLinkHTTPResponse(status: http.statusCode, headers: headers, body: data)
    }
}
