/// The throwaway PKI of `Tests/Fixtures/tls` (committed; made by `scripts/make-tls-fixtures.sh`,
/// test-only keys): a CA, a server certificate for `tls.test` and `127.0.0.1` signed by it (valid
/// for 100 years), an expired one and one for another name (both signed by the same CA), and a
/// second CA nobody trusts. Committed rather than made at test time, so `swift test` needs no
/// `openssl` command.
struct TestCertificates: Sendable {
    /// A leaf certificate (PEM chain) and its key.
    struct Identity: Sendable {
        var chain: String
        var key: String
    }

    static let shared = TestCertificates()

    let directory: String

    private init() {
        let file = "\(#filePath)"  // …/Tests/OptoLinkHTTPTests/Support/TestCertificates.swift
        let tests = file.split(separator: "/", omittingEmptySubsequences: false).dropLast(3)
        directory = tests.joined(separator: "/") + "/Fixtures/tls"
    }

    var caFile: String { directory + "/ca.pem" }
    var otherCAFile: String { directory + "/other-ca.pem" }
    /// `tls.test` and IP `127.0.0.1`.
    var valid: Identity { identity("valid") }
    /// Same names, but its validity ended before it began.
    var expired: Identity { identity("expired") }
    /// For `other.test` only.
    var wrongName: Identity { identity("wrong") }

    private func identity(_ name: String) -> Identity {
        Identity(chain: "\(directory)/\(name).pem", key: "\(directory)/\(name).key")
    }
}
