/// How ``HTTPClient`` sets up `https` connections (requests with ``HTTPClientRequest/usesTLS``).
///
/// Always: TLS 1.2 or 1.3, SNI for host names, ALPN `http/1.1`, sessions resumed per host and
/// port. By default the server's certificate is verified against the system trust store
/// (OpenSSL's default paths, so `SSL_CERT_FILE` and `SSL_CERT_DIR` are honoured as every OpenSSL
/// program honours them) and against the host: a name is matched against the certificate's DNS
/// names, an IP literal against its IP addresses.
package struct TLSConfiguration: Sendable, Equatable {
    /// Verify the server's certificate and host (`false`: accept any certificate, e.g. `--insecure`).
    package var verifiesPeer: Bool
    /// A PEM file of extra trusted CA certificates, added to the system trust store (e.g. `--cacert`).
    package var additionalTrustFile: String?

    /// Verification on, system trust store only.
    package init(verifiesPeer: Bool = true, additionalTrustFile: String? = nil) {
        self.verifiesPeer = verifiesPeer
        self.additionalTrustFile = additionalTrustFile
    }
}
