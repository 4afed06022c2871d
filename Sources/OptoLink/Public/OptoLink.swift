import Foundation

// SKELETON: signatures are final (seed 001 + the additive isolated-instance API);
// bodies are placeholders that the SDK work replaces.

public final class OptoLink: Sendable {
    public let deviceId: String
    public let config: OptoLinkConfig

    /// Additive API: an isolated, non-singleton instance with its own environment.
    /// Reads or creates the persisted `deviceId` synchronously; does no network I/O.
    /// Call ``start()`` to run the first-launch orchestration.
    public init(config: OptoLinkConfig, environment: OptoLinkEnvironment) {
        self.config = config
        self.deviceId = environment.store.string(forKey: "deviceId") ?? UUID().uuidString.lowercased()
    }

    /// Additive API: runs initialisation for an isolated instance (idempotent,
    /// concurrency-safe, never throws) — what ``initialize(config:)`` does for the singleton.
    public func start() async {}

    @discardableResult
    public static func initialize(config: OptoLinkConfig) async -> OptoLink {
        fatalError("skeleton")
    }

    public static func instance() -> OptoLink { fatalError("skeleton") }

    public var links: AsyncStream<OptoLinkData> { AsyncStream { _ in } }
    public func handle(url: URL) {}
    public func resolveDeferredLink() async throws -> OptoLinkData? { nil }
    public func setIdentity(externalId: String) async throws {}
    public func clearIdentity() async throws {}
    public func trackEvent(name: String, properties: [String: String] = [:]) async throws {}
    public func dispose() {}
}

public struct OptoLinkData: Sendable, Codable, Equatable {
    public let linkId: String?
    public let path: String
    public let params: [String: String]?
    public let matchMethod: MatchMethod
    public let confidence: MatchConfidence
    public let isDeferred: Bool
    public let score: Int?
}

public enum MatchMethod: String, Sendable, Codable {
    case clipboard = "CLIPBOARD"
    case installReferrer = "INSTALL_REFERRER"
    case fingerprintExact = "FINGERPRINT_EXACT"
    case fingerprintScored = "FINGERPRINT_SCORED"
    case ipFuzzy = "IP_FUZZY"
    case direct = "DIRECT"
    case none = "NONE"
}

public enum MatchConfidence: String, Sendable, Codable {
    case exact = "EXACT", high = "HIGH", medium = "MEDIUM", low = "LOW"
}

public protocol OptoLinkError: Error, Sendable {}

public struct OptoLinkApiError: OptoLinkError, LocalizedError {
    public let status: Int
    public let requestId: String?
    public let details: [OptoLinkErrorDetail]?
    public let retryAfterSeconds: Int?
    public let raw: String?
}

public struct OptoLinkConnectionError: OptoLinkError {
    public let underlying: URLError
}

public struct OptoLinkErrorDetail: Sendable, Codable, Equatable {
    public let message: String
    public let field: String?
}

public struct OptoLinkConfig: Sendable {
    public var apiKey: String
    public var orgKey: String
    public var baseUrl: URL
    public var timeout: TimeInterval = 10
    public var maxRetries: Int = 2
    public var clipboardEnabled: Bool = true
    public var logger: (any OptoLinkLogger)? = nil

    public init(apiKey: String, orgKey: String, baseUrl: URL) {
        self.apiKey = apiKey
        self.orgKey = orgKey
        self.baseUrl = baseUrl
    }
}

public protocol OptoLinkLogger: Sendable {
    func log(level: OptoLinkLogLevel, _ message: String, error: (any Error)?)
}

public enum OptoLinkLogLevel: Sendable {
    case info, warning, error
}

/// SKELETON placeholder.
public struct OptoLinkContractRetryPolicy: OptoLinkRetryPolicy {
    public init() {}
    public func decide(after failure: OptoLinkAttemptFailure, endpoint: OptoLinkEndpoint, retryIndex: Int) -> OptoLinkRetryDecision { .stop }
}
