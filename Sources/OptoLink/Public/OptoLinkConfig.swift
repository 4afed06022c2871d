import Foundation

/// What an app passes to ``OptoLink/initialize(config:)`` (seed 001, "config").
///
/// Defaults: `timeout` 10 seconds per attempt, `maxRetries` 2 (up to 3 attempts per public
/// call), `clipboardEnabled` true, no logger.
public struct OptoLinkConfig: Sendable {
    /// The CLIENT-tier key `opl_sdk_…`. Must not be blank (checked at construction).
    public var apiKey: String
    /// The organisation whose Universal Links this app resolves (`/{orgKey}/{shortCode}`).
    public var orgKey: String
    /// The backend base URL, e.g. `https://api.optolink.io`; a trailing `/` is ignored.
    public var baseUrl: URL
    /// Per-attempt deadline in seconds, enforced on the injected clock; `<= 0`, NaN or infinity disables it.
    public var timeout: TimeInterval = 10
    /// Retries after the first attempt, shared by one public call; negative counts as 0.
    public var maxRetries: Int = 2
    /// Whether the deferred match reads the clipboard leg.
    public var clipboardEnabled: Bool = true
    /// Receives the decision trail and failures; `nil` disables logging.
    public var logger: (any OptoLinkLogger)? = nil

    /// Creates a config with the seed's defaults.
    ///
    /// A blank `apiKey` is a programmer error and stops the process with a precondition
    /// message, as the Android SDK rejects it at construction.
    public init(apiKey: String, orgKey: String, baseUrl: URL) {
        if let problem = OptoLinkConfig.validationProblem(apiKey: apiKey) {
            preconditionFailure(problem)
        }
        self.apiKey = apiKey
        self.orgKey = orgKey
        self.baseUrl = baseUrl
    }

    /// The message the precondition would stop with for this key, or `nil` when it is valid.
    static func validationProblem(apiKey: String) -> String? {
        if apiKey.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            return "OptoLinkConfig: apiKey must not be blank (pass your CLIENT-tier opl_sdk_… key)"
        }
        return nil
    }
}
