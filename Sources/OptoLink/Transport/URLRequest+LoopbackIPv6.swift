import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking

    extension URLRequest {
        /// This request with an `[::1]` host sent to `localhost` instead, its `Host` field still
        /// `[::1]:port`; any other request unchanged.
        ///
        /// Why: FoundationNetworking (swift-corelibs-foundation issue 5496, open in Swift 6.3)
        /// compares libcurl's host of the URL (`[::1]`, brackets kept) with `URL.host` (`::1`) and
        /// fails every IPv6 literal with `URLError(.badURL)` (-1000) before sending. libcurl
        /// resolves `localhost` itself to `::1` and `127.0.0.1` and tries IPv6 first, so a server
        /// listening on `::1` only gets the request, with the `Host` field it would have had.
        /// Other IPv6 literals have no such name and still fail as `.badURL`.
        func rewritingLoopbackIPv6() -> URLRequest {
            guard let url, let host = url.host, host == "::1" || host == "0:0:0:0:0:0:0:1",
                var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            else { return self }
            components.host = "localhost"
            guard let rewritten = components.url else { return self }
            var request = self
            request.url = rewritten
            if request.value(forHTTPHeaderField: "Host") == nil {
                request.setValue(url.port.map { "[::1]:\($0)" } ?? "[::1]", forHTTPHeaderField: "Host")
            }
            return request
        }
    }
#endif
