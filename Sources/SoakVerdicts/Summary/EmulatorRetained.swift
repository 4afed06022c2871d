/// How much state the embedded emulator held at one sample of the run (`summary.json`
/// `rss[].emulator`): the evidence that its memory stays bounded in a long run. The runner
/// fills it from the emulator's own count; the keys are the emulator's.
package struct EmulatorRetained: Sendable, Codable, Equatable {
    /// Ledger entries held in memory (0 once the ledger streams to a file).
    package var ledgerInMemory: Int
    /// Ledger entries written so far (in memory or in the file).
    package var ledgerTotal: Int
    /// Clicks held (expired ones are swept at their TTL).
    package var clicks: Int
    /// Devices known (idle ones are evicted after `deviceIdleSeconds`).
    package var devices: Int
    /// Rate-limiter keys held (keys idle two windows are evicted).
    package var limiterKeys: Int

    package init(ledgerInMemory: Int, ledgerTotal: Int, clicks: Int, devices: Int, limiterKeys: Int) {
        self.ledgerInMemory = ledgerInMemory
        self.ledgerTotal = ledgerTotal
        self.clicks = clicks
        self.devices = devices
        self.limiterKeys = limiterKeys
    }
}
