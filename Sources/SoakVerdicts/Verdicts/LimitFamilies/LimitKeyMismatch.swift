/// A bucket whose server answers fit another key than the declared one: e.g. a per-IP limit
/// that behaves as one global limit because a proxy overwrote `X-Forwarded-For` and the server
/// keys on its socket peer (`limits.key_mismatch`). The declared key's too-strict / too-lenient
/// counts are kept here, not reported as breaches: the key is the finding.
package struct LimitKeyMismatch: Sendable, Codable, Equatable {
    /// What a bucket key is, as fitted.
    package enum Scope: String, Sendable, Codable {
        /// The client IP (the devices' addresses, or `X-Forwarded-For`).
        case ip
        /// The run's API key.
        case key
        /// One key for every client.
        case shared
    }

    package var declared: Scope
    /// The key the server's answers fit.
    package var fitting: Scope
    /// The family that explains the answers under the fitting key.
    package var family: LimiterFamily
    /// Under the declared key: 429s a correct limiter would have passed, passes it would have rejected.
    package var declaredTooStrict: Int
    package var declaredTooLenient: Int

    /// The likely cause and the fix, for the report.
    package var cause: String {
        switch (declared, fitting) {
        case (.ip, .shared):
            "every client shares one key: the server keys on its socket peer, or a proxy overwrites "
                + "X-Forwarded-For; use --local-ips or have the edge append X-Forwarded-For"
        case (.key, .ip):
            "the server keys on the client IP, not the API key"
        default:
            "the server keys on \(fitting.rawValue), not \(declared.rawValue)"
        }
    }
}
