import Foundation

/// What an app passes to ``OptoLink/initialize(config:)`` (seed 001, "config").
///
/// Defaults: `timeout` 10 seconds per attempt, `maxRetries` 2 (up to 3 attempts per public
/// call), `clipboardEnabled` true, no logger, route cache off (30 days, 100 entries when on).
public struct OptoLinkConfig: Sendable {
    /// The CLIENT-tier key `opl_sdk_…`. Must not be blank (checked at construction).
    public var apiKey: String
    /// The organisation whose Universal Links this app resolves (`/{orgKey}/{shortCode}`).
    public var orgKey: String
    /// The backend base URL, e.g. `https://api.optolink.io`; a trailing `/` is ignored.
    public var baseUrl: URL
    /// Per-attempt deadline in seconds, enforced on the injected clock; `<= 0`, NaN or infinity disables it.
    public var timeout: TimeInterval = OptoLinkConfig.defaultTimeout
    /// Retries after the first attempt, shared by one public call; negative counts as 0.
    public var maxRetries: Int = OptoLinkConfig.defaultMaxRetries
    /// Whether the deferred match reads the clipboard leg.
    public var clipboardEnabled: Bool = true
    /// Receives the decision trail and failures; `nil` disables logging.
    public var logger: (any OptoLinkLogger)? = nil
    /// Opt-in route cache for Universal Links (additive API; off by default).
    ///
    /// When on, every successful `/data` resolution is kept in the instance's key-value store
    /// under the URL's host, path and query, with the wall-clock time it was stored. When a
    /// later resolution of the same URL fails for want of a usable answer (no connection, a
    /// timeout, a 5xx, or a 429 once the retries are spent), `links` emits the cached route
    /// with ``OptoLinkData/source`` `.cached` instead of the raw link. A 404 or 410 deletes the
    /// entry and emits the raw link. Off: the contract's behaviour, the raw link on any
    /// failure (docs/CONTRACT.md §2, "handle(url:)").
    public var routeCache: Bool = false
    /// How old a cached route may be, in seconds, and still be served (default 30 days).
    /// Older entries are ignored and deleted; `<= 0` or NaN serves none.
    public var routeCacheMaxAge: TimeInterval = OptoLinkConfig.defaultRouteCacheMaxAge
    /// The most routes kept; when a new one would exceed it, the least recently used entry
    /// (stored or served longest ago) goes first. `<= 0` keeps none.
    public var routeCacheMaxEntries: Int = OptoLinkConfig.defaultRouteCacheMaxEntries

    /// The default per-attempt timeout: 10 seconds (seed 000).
    public static let defaultTimeout: TimeInterval = 10
    /// The default retries per public call: 2 (3 attempts).
    public static let defaultMaxRetries = 2
    /// The default ``routeCacheMaxAge``: 30 days, in seconds.
    public static let defaultRouteCacheMaxAge: TimeInterval = 30 * 24 * 3600
    /// The default ``routeCacheMaxEntries``: 100.
    public static let defaultRouteCacheMaxEntries = 100

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

    /// Creates a config with every settable field in one call (additive API); each argument
    /// left out takes the same default as the seed's three-argument initialiser.
    ///
    /// - Parameters:
    ///   - apiKey: the CLIENT key (`opl_sdk_…`), sent as `X-API-Key`; must not be blank.
    ///   - orgKey: the organisation key, the first path segment of links (`/{orgKey}/{shortCode}`).
    ///   - baseUrl: the backend's base URL; endpoint paths are appended to it.
    ///   - timeout: seconds per HTTP attempt (default 10).
    ///   - maxRetries: retries after the first attempt per public call (default 2).
    ///   - clipboardEnabled: whether the deferred match reads the clipboard (default `true`).
    ///   - logger: receives the decision trail (default none).
    ///   - routeCache: whether failed Universal Link resolutions fall back to cached routes
    ///     (default `false`).
    ///   - routeCacheMaxAge: seconds a cached route stays usable (default 30 days).
    ///   - routeCacheMaxEntries: most routes kept, least recently used evicted first (default 100).
    ///
    /// A blank `apiKey` stops the process with a precondition message, as in the seed initialiser.
    public init(
        apiKey: String,
        orgKey: String,
        baseUrl: URL,
        timeout: TimeInterval = OptoLinkConfig.defaultTimeout,
        maxRetries: Int = OptoLinkConfig.defaultMaxRetries,
        clipboardEnabled: Bool = true,
        logger: (any OptoLinkLogger)? = nil,
        routeCache: Bool = false,
        routeCacheMaxAge: TimeInterval = OptoLinkConfig.defaultRouteCacheMaxAge,
        routeCacheMaxEntries: Int = OptoLinkConfig.defaultRouteCacheMaxEntries
    ) {
        self.init(apiKey: apiKey, orgKey: orgKey, baseUrl: baseUrl)
        self.timeout = timeout
        self.maxRetries = maxRetries
        self.clipboardEnabled = clipboardEnabled
        self.logger = logger
        self.routeCache = routeCache
        self.routeCacheMaxAge = routeCacheMaxAge
        self.routeCacheMaxEntries = routeCacheMaxEntries
    }

    /// The message the precondition would stop with for this key, or `nil` when it is valid.
    /// `package`, not `public`: this package's tests check the message without trapping.
    package static func validationProblem(apiKey: String) -> String? {
        // A key that starts with a visible ASCII character is not blank (the usual case, decided
        // without `trimmingCharacters`, which every SDK instance's config would otherwise pay for).
        if let first = apiKey.utf8.first, first > 0x20, first < 0x7F { return nil }
        if apiKey.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            return "OptoLinkConfig: apiKey must not be blank (pass your CLIENT-tier opl_sdk_… key)"
        }
        return nil
    }
}
