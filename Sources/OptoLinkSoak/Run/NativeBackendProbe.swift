import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import OptoLinkHTTP

/// The pre-flight reachability check of an `https://` backend on the native transport: one
/// `GET /.well-known/apple-app-site-association` through a short-lived native client with the
/// run's TLS settings, so a certificate that will not verify stops the run before it starts
/// (exit 2) with OpenSSL's reason and the flag that fixes it.
package enum NativeBackendProbe {
    /// - Throws: ``SoakProfileError`` "TLS failed with backend …" naming the reason and the fix,
    ///   or "unreachable backend …" when no response arrives for another reason.
    static func checkReachable(_ baseURL: URL, tls: TLSConfiguration) async throws {
        let url = baseURL.appendingPathComponent(".well-known/apple-app-site-association").absoluteString
        guard let (host, port, target, usesTLS) = NativeTransport.splitURL(url) else {
            throw SoakProfileError(message: "unreachable backend \(baseURL.absoluteString): not an http(s) URL")
        }
        let client = try HTTPClient(configuration: .init(maxConnectionsPerHost: 1, tls: tls))
        let request = HTTPClientRequest(method: "GET", host: host, port: port, target: target, usesTLS: usesTLS)
        let outcome: HTTPClientError?
        do {
            _ = try await client.execute(request, timeout: .seconds(5))
            outcome = nil
        } catch {
            outcome = error
        }
        await client.shutdown()
        switch outcome {
        case nil: return
        case .tlsFailed(let failure)?:
            throw SoakProfileError(
                message: "TLS failed with backend \(baseURL.absoluteString): \(failure.kind.rawValue): "
                    + "\(failure.reason); \(fix(for: failure, cacert: tls.additionalTrustFile))")
        case let error?:
            throw SoakProfileError(
                message: "unreachable backend \(baseURL.absoluteString): "
                    + BackendProbe.describe(NativeTransport.urlError(error), timeout: 5))
        }
    }

    /// A `GET` of `request`'s URL with its header fields through `client` (the run's TLS settings);
    /// the body and status, or `nil` when no response arrived.
    static func get(_ request: URLRequest, through client: HTTPClient) async -> (Data, Int)? {
        guard let url = request.url?.absoluteString, let (host, port, target, usesTLS) = NativeTransport.splitURL(url)
        else { return nil }
        let fields = (request.allHTTPHeaderFields ?? [:]).map { (name: $0.key, value: $0.value) }
        let native = HTTPClientRequest(
            method: "GET", host: host, port: port, target: target, headers: HTTPHeaders(fields), usesTLS: usesTLS)
        guard let response = try? await client.execute(native, timeout: .seconds(5)) else { return nil }
        return (Data(response.body), response.status)
    }

    /// The flag or change that makes the handshake succeed; `cacert` is the `--cacert` file given, if any.
    package static func fix(for failure: TLSFailure, cacert: String? = nil) -> String {
        switch failure.kind {
        case .unknownCA:
            if let cacert {
                "the server's certificate is not signed by a CA in --cacert \(cacert) (nor by the system's): pass "
                    + "the CA that issued it (its PEM certificate), or --insecure to skip verification"
            } else {
                "pass --cacert FILE for a private CA (its PEM certificate), or --insecure to skip verification"
            }
        case .expired:
            "renew the server's certificate (or check this machine's clock), or --insecure to skip verification"
        case .hostnameMismatch:
            "use a --base-url host the certificate names, or --insecure to skip verification"
        case .protocol:
            "check that the port speaks TLS 1.2 or 1.3 (an http:// port needs an http:// --base-url)"
        case .configuration:
            "check the --cacert file (a PEM bundle) and that OpenSSL 3 (libssl3) is installed"
        }
    }
}
