/// How much state the emulator holds right now: the evidence that its memory stays bounded in
/// a long run (sampled over time into a soak run's `summary.json`).
public struct StagingRetained: Sendable, Codable, Equatable {
    /// Ledger entries held in memory (0 once the ledger streams to a file).
    public var ledgerInMemory: Int
    /// Ledger entries written so far (in memory or in the file).
    public var ledgerTotal: Int
    /// Clicks held (expired ones are swept at their TTL).
    public var clicks: Int
    /// Devices known (idle ones are evicted after `deviceIdleSeconds`).
    public var devices: Int
    /// Rate-limiter keys held (keys idle two windows are evicted).
    public var limiterKeys: Int

    public init(ledgerInMemory: Int, ledgerTotal: Int, clicks: Int, devices: Int, limiterKeys: Int) {
        self.ledgerInMemory = ledgerInMemory
        self.ledgerTotal = ledgerTotal
        self.clicks = clicks
        self.devices = devices
        self.limiterKeys = limiterKeys
    }
}
