import Foundation

/// One accepted write, as the emulator's ledger records it (docs/CONTRACT.md §4, "Ledger").
///
/// The same JSON shape is the `--ledger FILE` format the soak tester reads from a real
/// staging backend: a JSON array of these objects.
public struct StagingLedgerEntry: Sendable, Codable, Equatable {
    /// Increases by one per accepted write, from 1.
    public var sequence: Int
    /// Arrival time in seconds since the Unix epoch.
    public var arrivedAt: Double
    /// `session`, `identity`, `identity_clear` or `events` (the SDK's endpoint names).
    public var endpoint: String
    /// The body's `deviceId`.
    public var deviceId: String
    /// The API key's last 4 characters, the ones its redaction shows (`SecretRedaction`); empty
    /// for a key too short to show any. Keys are never stored whole.
    public var apiKeySuffix: String
    /// The event name for `events`, else `nil`.
    public var eventName: String?
    /// `externalId` for `identity`, else `nil`.
    public var externalId: String?
    /// The event's properties for `events`, else `nil` (correlation ids ride here).
    public var properties: [String: String]?
    /// Whether a fault answered this request with a failure after the write committed.
    public var faultAfterCommit: String?

    public init(
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
