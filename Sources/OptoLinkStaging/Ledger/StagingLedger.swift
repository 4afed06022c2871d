import Synchronization

/// The record of every accepted write (CONTRACT §4, "Ledger"), in arrival order.
final class StagingLedger: Sendable {
    private struct State {
        var entries: [StagingLedgerEntry] = []
        var nextSequence = 1
    }

    private let state = Mutex(State())

    /// Appends one write and returns its sequence number.
    @discardableResult
    func append(
        arrivedAt: Double, endpoint: StagingEndpoint, deviceId: String, apiKey: String, eventName: String? = nil,
        externalId: String? = nil, properties: [String: String]? = nil, faultAfterCommit: String? = nil
    ) -> Int {
        state.withLock { state in
            let sequence = state.nextSequence
            state.nextSequence += 1
            state.entries.append(
                StagingLedgerEntry(
                    sequence: sequence, arrivedAt: arrivedAt, endpoint: endpoint.rawValue, deviceId: deviceId,
                    apiKeySuffix: String(apiKey.suffix(6)), eventName: eventName, externalId: externalId,
                    properties: properties, faultAfterCommit: faultAfterCommit))
            return sequence
        }
    }

    func entries() -> [StagingLedgerEntry] { state.withLock { $0.entries } }
    var count: Int { state.withLock { $0.entries.count } }
    func reset() { state.withLock { $0 = State() } }
}
