/// A snapshot of the emulator's counters (`GET /__admin/counters`): requests per endpoint
/// by status, and per rate-limit bucket the accepted and rejected hits of each window.
public struct StagingCounters: Sendable, Codable, Equatable {
    /// Endpoint name (`match`, `data`, `session`, `identity`, `identity_clear`, `events`,
    /// `click`, `aasa`, `admin`, `unknown`) → status code as text (or `reset`) → count.
    public var endpoints: [String: [String: Int]]
    /// One row per bucket (class + IP or masked key).
    public var buckets: [StagingBucketCounters]
    /// Endpoint name → fault kind (`html_502`, `reset`, …) → how many answers it shaped.
    public var faults: [String: [String: Int]]
    /// The number of ledger entries.
    public var ledgerEntries: Int

    /// A snapshot (built by the backend; public for decoding and tests).
    public init(
        endpoints: [String: [String: Int]], buckets: [StagingBucketCounters], faults: [String: [String: Int]] = [:],
        ledgerEntries: Int
    ) {
        self.endpoints = endpoints
        self.buckets = buckets
        self.faults = faults
        self.ledgerEntries = ledgerEntries
    }

    /// How many requests to `endpoint` were answered with `status` (e.g. `"429"`, `"reset"`).
    public func count(_ endpoint: String, status: String) -> Int { endpoints[endpoint]?[status] ?? 0 }

    /// How many answers of `endpoint` a fault of `kind` shaped.
    public func faultCount(_ endpoint: String, _ kind: StagingFaultKind) -> Int {
        faults[endpoint]?[kind.rawValue] ?? 0
    }
}

/// Counters of one rate-limit bucket.
public struct StagingBucketCounters: Sendable, Codable, Equatable {
    /// The bucket class (`match`, `data`, `sdk`, `events`).
    public var bucket: StagingBucketClass
    /// The client IP, or the API key redacted, then `#<hash>` (`opl_sdk_test_…#9f3a1c07`).
    public var key: String
    /// The limit in force when the snapshot was taken.
    public var limit: Int
    /// The window length in seconds.
    public var windowSeconds: Double
    /// Accepted hits over every recorded window.
    public var accepted: Int
    /// Rejected (429) hits over every recorded window.
    public var rejected: Int
    /// Fixed windows (opened at the first hit after the previous one ended), oldest first.
    public var windows: [StagingWindowCounter]
}

/// Accepted and rejected hits of one window of one bucket.
public struct StagingWindowCounter: Sendable, Codable, Equatable {
    /// The window's start in seconds since the Unix epoch.
    public var start: Double
    /// Hits let through in this window.
    public var accepted: Int
    /// Hits answered 429 in this window.
    public var rejected: Int
}
