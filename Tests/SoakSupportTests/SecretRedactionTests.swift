import SoakSupport
import Testing

/// The one redaction every report and log line uses for a key or a header value.
@Suite("Secret redaction")
struct SecretRedactionTests {
    @Test(
        "redaction keeps a recognisable prefix and the last 4 characters, and only of a long enough secret",
        arguments: [
            ("opl_sdk_live_S3CR3TVALUE0042", "opl_sdk_live_…0042"),
            ("opl_sdk_test_acme_client", "opl_sdk_test_…"),
            ("opl_srv_test_acme_server_01", "opl_srv_test_…r_01"),
            ("opl_sdk_short", "opl_sdk_…"),
            ("Bearer PROXYSECRET-7781-zeta", "Bearer …zeta"),
            ("tok", "…"),
            ("opl_sdk_live_…0042", "opl_sdk_live_…0042"),
            ("", ""),
        ])
    func redaction(secret: String, redacted: String) {
        #expect(SecretRedaction.redact(secret) == redacted)
        #expect(SecretRedaction.redact(SecretRedaction.redact(secret)) == redacted, "applying it twice changes nothing")
    }
}
