/// Why a TLS connection could not be set up: the kind (a short label for reports) and OpenSSL's
/// own reason text.
package struct TLSFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, coarse enough to name the fix.
    package enum Kind: String, Sendable, Equatable, CaseIterable {
        /// The server's certificate chain does not lead to a trusted root (a private or unknown CA,
        /// a self-signed certificate): trust its CA, or skip verification.
        case unknownCA = "unknown_ca"
        /// A certificate in the chain is past its validity (or not yet valid).
        case expired
        /// The certificate is valid but for another name or IP address than the one connected to.
        case hostnameMismatch = "hostname_mismatch"
        /// The handshake itself failed: no common protocol version or cipher, an alert from the
        /// server, or a peer that does not speak TLS.
        case `protocol`
        /// TLS could not be set up on this side: OpenSSL is missing, or a trust file does not load.
        case configuration
    }

    package var kind: Kind
    /// OpenSSL's reason, e.g. `unable to get local issuer certificate`.
    package var reason: String

    package init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// The kind of an `X509_V_ERR_*` verification result (`SSL_get_verify_result`).
    static func kind(verifyResult code: Int) -> Kind {
        switch code {
        // UNABLE_TO_GET_ISSUER_CERT(_LOCALLY), DEPTH_ZERO_SELF_SIGNED_CERT, SELF_SIGNED_CERT_IN_CHAIN,
        // UNABLE_TO_VERIFY_LEAF_SIGNATURE
        case 2, 18, 19, 20, 21: .unknownCA
        // CERT_NOT_YET_VALID, CERT_HAS_EXPIRED, CRL_NOT_YET_VALID, CRL_HAS_EXPIRED
        case 9, 10, 11, 12: .expired
        // HOSTNAME_MISMATCH, EMAIL_MISMATCH, IP_ADDRESS_MISMATCH
        case 62, 63, 64: .hostnameMismatch
        default: .protocol
        }
    }

    package var description: String {
        let label = String(kind.rawValue.map { $0 == "_" ? " " : $0 })
        return "TLS \(label): \(reason)"
    }
}
