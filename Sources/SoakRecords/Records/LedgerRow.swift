/// One accepted write as the server's ledger holds it (docs/CONTRACT.md §4, "Ledger").
///
/// Decodes the ledger's JSON wire format: the rows the emulator writes to its ledger file and
/// serves at `/__admin/ledger`, and the `--ledger FILE` a real staging backend provides (a JSON
/// array, or one object per line). The keys are the wire's; a row encodes to the same JSON.
package struct LedgerRow: Sendable, Codable, Equatable {
    /// Increases by one per accepted write, from 1.
    package var sequence: Int
    /// Arrival time in seconds since the Unix epoch.
    package var arrivedAt: Double
    /// `session`, `identity`, `identity_clear` or `events` (``ContractEndpoint`` raw values).
    package var endpoint: String
    /// The body's `deviceId`.
    package var deviceId: String
    /// The API key's last 4 characters, the ones its redaction shows (`SecretRedaction`); empty
    /// for a key too short to show any. Keys are never stored whole.
    package var apiKeySuffix: String
    /// The event name for `events`, else `nil`.
    package var eventName: String?
    /// `externalId` for `identity`, else `nil`.
    package var externalId: String?
    /// The event's properties for `events`, else `nil` (correlation ids ride here).
    package var properties: [String: String]?
    /// Whether a fault answered this request with a failure after the write committed.
    package var faultAfterCommit: String?

    package init(
        sequence: Int, arrivedAt: Double, endpoint: String, deviceId: String, apiKeySuffix: String,
        eventName: String? = nil, externalId: String? = nil, properties: [String: String]? = nil,
        faultAfterCommit: String? = nil
    ) {
        self.sequence = sequence
        self.arrivedAt = arrivedAt
        self.endpoint = endpoint
        self.deviceId = deviceId
        self.apiKeySuffix = apiKeySuffix
        self.eventName = eventName
        self.externalId = externalId
        self.properties = properties
        self.faultAfterCommit = faultAfterCommit
    }
}
