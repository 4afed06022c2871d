/// The secret files a `run` command line names (`--api-key-file`, `--header-file`,
/// `--admin-token-file`), read by ``SecretSources/resolve(_:files:environment:)`` once parsing ends.
package struct RunSecretFiles: Sendable, Equatable {
    package var apiKey: String?
    package var headers: String?
    package var adminToken: String?
    package init() {}
}
