import SoakSupport
import Testing

/// The comparison the emulator's admin door checks a bearer token with.
@Suite struct ConstantTimeComparisonTests {
    @Test("constant-time comparison: equal only for the same bytes, whatever the lengths")
    func constantTimeComparison() {
        #expect(ConstantTimeComparison.equal("s3cret", "s3cret"))
        #expect(!ConstantTimeComparison.equal("s3cres", "s3cret"))
        #expect(!ConstantTimeComparison.equal("s3cre", "s3cret"))
        #expect(!ConstantTimeComparison.equal("s3crets", "s3cret"))
        #expect(!ConstantTimeComparison.equal("", "s3cret"))
        #expect(!ConstantTimeComparison.equal("", ""), "an empty expected token never matches")
        // A prefix repeated to the expected length must not match by wrapping around.
        #expect(!ConstantTimeComparison.equal("abab", "ab"))
        #expect(ConstantTimeComparison.equal("é", "é"))
    }
}
