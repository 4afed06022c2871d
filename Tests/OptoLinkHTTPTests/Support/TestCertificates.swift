#if canImport(Glibc)
    import Glibc
#endif

/// A throwaway PKI made with the `openssl` command at test time, in a fresh temporary directory:
/// a CA, a server certificate for `tls.test` and `127.0.0.1` signed by it, an expired one and
/// one for another name (both signed by the same CA), and a second CA nobody trusts.
struct TestCertificates: Sendable {
    let directory: String
    var caFile: String { directory + "/ca.pem" }
    var otherCAFile: String { directory + "/other-ca.pem" }

    /// A leaf certificate (PEM chain) and its key.
    struct Identity: Sendable {
        var chain: String
        var key: String
    }

    /// `tls.test` and IP `127.0.0.1`, valid for a day.
    var valid: Identity { Identity(chain: directory + "/valid.pem", key: directory + "/valid.key") }
    /// Same names, but its validity ended before it began.
    var expired: Identity { Identity(chain: directory + "/expired.pem", key: directory + "/expired.key") }
    /// Valid, but for `other.test` only.
    var wrongName: Identity { Identity(chain: directory + "/wrong.pem", key: directory + "/wrong.key") }

    /// Made once per test process (a few `openssl` runs, well under a second).
    static let shared: Result<TestCertificates, CertificateError> = make()

    struct CertificateError: Error, CustomStringConvertible {
        var description: String
    }

    private static func make() -> Result<TestCertificates, CertificateError> {
        var template = Array("/tmp/optolink-tls-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { return .failure(CertificateError(description: "mkdtemp failed")) }
        let directory = String(cString: made)
        let key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
        func leaf(_ name: String, _ san: String, days: Int) -> String {
            """
            openssl req \(key) -keyout \(name).key -out \(name).csr -subj /CN=\(name) &&
            printf 'subjectAltName=\(san)\\n' > \(name).ext &&
            openssl x509 -req -in \(name).csr -CA ca.pem -CAkey ca.key -CAcreateserial -days \(days) \
              -extfile \(name).ext -out \(name).pem
            """
        }
        let script = """
            cd \(directory) && {
            openssl req -x509 \(key) -keyout ca.key -out ca.pem -days 1 -subj '/CN=OptoLink Test CA' &&
            openssl req -x509 \(key) -keyout other-ca.key -out other-ca.pem -days 1 -subj '/CN=Other CA' &&
            \(leaf("valid", "DNS:tls.test,IP:127.0.0.1", days: 1)) &&
            \(leaf("expired", "DNS:tls.test,IP:127.0.0.1", days: -1)) &&
            \(leaf("wrong", "DNS:other.test", days: 1))
            } > openssl.log 2>&1
            """
        guard system(script) == 0 else {
            return .failure(
                CertificateError(
                    description: "the openssl command failed (is it installed? apt-get install openssl); see "
                        + directory + "/openssl.log"))
        }
        return .success(TestCertificates(directory: directory))
    }
}
