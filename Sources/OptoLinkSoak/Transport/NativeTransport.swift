import Foundation
import OptoLink
import OptoLinkHTTP
import SoakRecords
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The SDK's ``OptoLinkTransport`` over the native ``HTTPClient``: what `--transport native` runs.
///
/// Each attempt is sent once with the SDK's per-attempt timeout as its deadline; cancelling the
/// attempt (the SDK's own deadline) closes its socket at once. Failures become the `URLError`
/// codes the SDK and the recorder classify (docs/CONTRACT.md, retry matrix): refused or not
/// connectable → `.cannotConnectToHost`, unresolvable host → `.cannotFindHost`, reset or closed
/// before the response was complete → `.networkConnectionLost`, broken framing →
/// `.badServerResponse`, deadline → `.timedOut`, cancellation → `.cancelled`. In the per-device
/// pool mode each virtual device (the instance label before `#`) has its own connection.
/// `https://` runs over the client's TLS (the system OpenSSL, Linux): verified against the system
/// trust store plus `--cacert`, or not at all with `--insecure`; a handshake failure becomes the
/// `URLError` of its kind (``tlsURLError(_:)``), which the recorder counts as `tls_failed`.
/// A request carrying ``SourceAddressField`` leaves from that local address (`--local-ips`).
///
/// It declares the SDK's three transport capabilities (``capabilities``): the client enforces
/// `context.timeout` itself (on the monotonic clock, closing the socket when it passes), so the SDK
/// calls this transport without its own deadline race; a timeout of zero means no deadline. It
/// registers each request with the call's `OptoLinkCallScope`, so the SDK runs public calls in
/// their caller's task and `dispose()` still ends a request in flight at once. And it names the
/// executor (``taskExecutor``: a client loop) that the instances over it start their own tasks on.
package struct NativeTransport: OptoLinkTransport {
    /// The budget of an attempt without a deadline (`context.timeout` of zero): one year.
    static let unbounded = Duration.seconds(31_536_000)

    /// The client every attempt goes through (shared by every SDK instance of a run).
    package let client: HTTPClient
    private let targets = TargetCache()

    /// The executor the SDK instances over this transport start their own tasks on (a client
    /// loop: ``running(on:)``); `nil`: the global pool.
    package var taskExecutor: (any TaskExecutor)?

    /// A transport over `client` (the caller owns its lifetime and shuts it down).
    package init(client: HTTPClient) { self.client = client }

    /// The same transport (same client, same URL cache), declaring `executor` for the instances over it.
    package func running(on executor: (any TaskExecutor)?) -> NativeTransport {
        var pinned = self
        pinned.taskExecutor = executor
        return pinned
    }

    /// Self-timed deadline, call scope, and ``taskExecutor``.
    package var capabilities: OptoLinkTransportCapabilities {
        var capabilities = OptoLinkTransportCapabilities(enforcesDeadline: true, registersCallScope: true)
        capabilities.taskExecutor = taskExecutor
        return capabilities
    }

    /// ``split(_:)`` of the URLs seen so far: a run sends to a handful of fixed URLs, parsed once each.
    final class TargetCache: Sendable {
        typealias Target = (host: String, port: Int, target: String, usesTLS: Bool)
        /// The most URLs kept; more (e.g. one `/data` URL per link and device) start it over.
        static let capacity = 256
        private let known = Mutex<[String: Target]>([:])

        func split(_ url: String) -> Target? {
            if let hit = known.withLock({ $0[url] }) { return hit }
            guard let target = NativeTransport.splitURL(url) else { return nil }
            known.withLock { known in
                if known.count >= Self.capacity { known.removeAll(keepingCapacity: true) }
                known[url] = target
            }
            return target
        }
    }

    /// Sends one attempt.
    ///
    /// - Throws: `URLError` as listed above when no response arrived; never for a status.
    package func send(_ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext) async throws
        -> OptoLinkHTTPResponse
    {
        guard let (host, port, target, usesTLS) = targets.split(request.url.absoluteString) else {
            throw URLError(.unsupportedURL)
        }
        // A device bound to a source address (`--local-ips`) says so in a field that is never sent.
        var sourceAddress: String?
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(request.headers.count)
        for (name, value) in request.headers {
            if name == SourceAddressField.name {
                sourceAddress = value
            } else {
                fields.append((name, value))
            }
        }
        // Only the per-device pool mode uses the partition (the shared pool ignores it).
        let partition =
            client.configuration.poolMode == .perPartition
            ? context.instanceLabel.map { DeviceLaunch(label: $0).device } : nil
        let body = request.body.map { data in data.withUnsafeBytes { [UInt8]($0) } } ?? []
        let native = HTTPClientRequest(
            method: request.method, host: host, port: port, target: target, headers: HTTPHeaders(fields), body: body,
            partition: partition, sourceAddress: sourceAddress, usesTLS: usesTLS)
        let response: HTTPClientResponse
        do {
            let timeout = context.timeout > .zero ? context.timeout : Self.unbounded
            // A call running in its caller's task (OptoLinkCallScope) is cancelled through its scope.
            let scope = context.callScope
            response = try await client.execute(native, timeout: timeout, cancellation: scope.map { $0.register })
        } catch {
            throw Self.urlError(error)
        }
        var responseHeaders = [String: String](minimumCapacity: response.headers.fields.count)
        for field in response.headers.fields where responseHeaders[field.name] == nil {
            responseHeaders[field.name] = field.value
        }
        responseHeaders[TLSHandshakeField.name] = response.tlsHandshakeNanoseconds.map { String($0) }
        return OptoLinkHTTPResponse(status: response.status, headers: responseHeaders, body: Data(response.body))
    }

    /// `http://host[:port]/target` → host (IPv6 without brackets), port (80 by default) and the
    /// still percent-encoded path and query; `nil` for another scheme, user info or a bad port.
    /// Done by hand: `URLComponents` cost more per attempt than the whole native round trip's parsing.
    static func split(_ url: String) -> (host: String, port: Int, target: String)? {
        splitURL(url).map { ($0.host, $0.port, $0.target) }
    }

    /// ``split(_:)`` for `http://` and `https://` (port 443 by default), with whether it is `https`.
    static func splitURL(_ url: String) -> TargetCache.Target? {
        let utf8 = url.utf8
        let usesTLS = url.hasPrefix("https://")
        let schemeLength = usesTLS ? 8 : 7
        guard utf8.count > schemeLength, usesTLS || url.hasPrefix("http://") else { return nil }
        let rest = url.utf8.dropFirst(schemeLength)
        let slash = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.firstIndex(of: UInt8(ascii: "?")) ?? rest.endIndex
        let authority = Substring(rest[rest.startIndex..<slash])
        var target = String(Substring(rest[slash...]))
        if target.isEmpty || target.hasPrefix("?") { target = "/" + target }
        if let hash = target.utf8.firstIndex(of: UInt8(ascii: "#")) { target = String(target[..<hash]) }
        guard !authority.isEmpty, !authority.utf8.contains(UInt8(ascii: "@")) else { return nil }
        var host = authority
        var port = usesTLS ? 443 : 80
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let value = Int(after.dropFirst()) else { return nil }
                port = value
            }
        } else if let colon = authority.lastIndex(of: ":") {
            guard let value = Int(authority[authority.index(after: colon)...]) else { return nil }
            host = authority[..<colon]
            port = value
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        return (String(host), port, target, usesTLS)
    }

    /// The `URLError` the SDK expects for each native failure.
    package static func urlError(_ error: HTTPClientError) -> URLError {
        switch error {
        case .connectionRefused, .cannotConnect: URLError(.cannotConnectToHost)
        case .cannotResolve: URLError(.cannotFindHost)
        case .connectionReset, .connectionClosed: URLError(.networkConnectionLost)
        case .badResponse: URLError(.badServerResponse)
        case .timedOut: URLError(.timedOut)
        case .cancelled: URLError(.cancelled)
        case .shutDown: URLError(.cancelled)
        case .invalidRequest: URLError(.badURL)
        case .tlsFailed(let failure): tlsURLError(failure)
        }
    }

    /// The `URLError` URLSession reports for the same kind of TLS failure, with OpenSSL's reason
    /// as its description: unknown CA → `.serverCertificateUntrusted`, expired →
    /// `.serverCertificateHasBadDate`, a name mismatch, protocol or set-up failure →
    /// `.secureConnectionFailed`.
    package static func tlsURLError(_ failure: TLSFailure) -> URLError {
        let code: URLError.Code =
            switch failure.kind {
            case .unknownCA: .serverCertificateUntrusted
            case .expired: .serverCertificateHasBadDate
            case .hostnameMismatch, .protocol, .configuration: .secureConnectionFailed
            }
        return URLError(code, userInfo: [NSLocalizedDescriptionKey: failure.description])
    }
}

/// Which HTTP stack carries the SDK's requests in a run or bench.
package enum SoakTransportKind: String, Sendable, Equatable, CaseIterable, Codable {
    /// The native client (``NativeTransport``): the default, for `http://` and `https://`.
    case native
    /// Foundation's URLSession, the path an iOS app's requests take on Linux (fidelity checks).
    case urlsession

    /// The transport a run really uses for `baseURL`, and the note to print when it differs from
    /// the one asked for. On Linux the native client speaks `https://` over the system OpenSSL;
    /// elsewhere (no system OpenSSL) `https://` with `native` runs on URLSession, and the user is
    /// told, never silently.
    package static func resolve(_ requested: SoakTransportKind, baseURL: URL) -> (SoakTransportKind, note: String?) {
        #if os(Linux)
            return (requested, nil)
        #else
            guard requested == .native, baseURL.scheme?.lowercased() == "https" else { return (requested, nil) }
            return (
                .urlsession,
                "note: --transport native speaks https:// only on Linux (the system OpenSSL); "
                    + "\(baseURL.absoluteString) runs on URLSession and the system's TLS here. "
                    + "Pass --transport urlsession to silence this note."
            )
        #endif
    }
}

/// One `--header 'Name: value'` added to every SDK attempt and browser click.
package struct SoakExtraHeader: Sendable, Equatable, Codable {
    package var name: String
    package var value: String

    /// The headers the SDK and the contract own: `--header` may not set them (they would be
    /// silently replaced or would change what the run measures).
    package static let reserved = [
        "Authorization", "X-API-Key", "X-OptoLink-SDK", "Content-Type", "Content-Length", "Transfer-Encoding",
        "Host", "Connection", "X-Forwarded-For", "Expect",
    ]

    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses `Name: value`.
    ///
    /// - Throws: ``SoakUsageError`` naming the problem: no colon, an empty or non-token name, a
    ///   CR/LF in the value, or a name the contract owns (see ``reserved``).
    package static func parse(_ text: String) throws -> SoakExtraHeader {
        guard let colon = text.firstIndex(of: ":") else {
            throw SoakUsageError(message: "--header: \"\(text)\" is not 'Name: value'")
        }
        let name = String(text[..<colon])
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        let token = CharacterSet(
            charactersIn: "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
        guard !name.isEmpty, name.unicodeScalars.allSatisfy({ token.contains($0) }) else {
            throw SoakUsageError(message: "--header: \"\(name)\" is not a valid header name (letters, digits, -)")
        }
        guard !value.contains("\r"), !value.contains("\n") else {
            throw SoakUsageError(message: "--header \(name): the value may not contain a line break")
        }
        if let owned = reserved.first(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) {
            throw SoakUsageError(
                message: "--header \(name): \(owned) is set by the SDK or the run (the contract's headers); "
                    + "it cannot be overridden")
        }
        return SoakExtraHeader(name: name, value: value)
    }
}

/// Adds the run's `--header` fields to every attempt. The SDK's own headers are never touched:
/// ``SoakExtraHeader/parse(_:)`` refuses their names, and a name the SDK sets anyway wins here too.
struct ExtraHeadersMiddleware: RequestEditingMiddleware {
    let headers: [SoakExtraHeader]

    /// Adds each field `request` does not already carry (names compared case-insensitively).
    func apply(to request: inout OptoLinkHTTPRequest) {
        for header in headers
        where !request.headers.keys.contains(where: {
            $0.caseInsensitiveCompare(header.name) == .orderedSame
        }) {
            request.headers[header.name] = header.value
        }
    }
}
