import Synchronization

/// The record of every accepted write (docs/CONTRACT.md §4, "Ledger"), in arrival order.
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

    /// Entries with a sequence above `since`, at most `limit` of them (sequences are contiguous from 1).
    func entries(since: Int, limit: Int) -> [StagingLedgerEntry] {
        state.withLock { state in
            let start = min(max(since, 0), state.entries.count)
            let end = start + min(max(limit, 0), state.entries.count - start)
            return Array(state.entries[start..<end])
        }
    }
    var count: Int { state.withLock { $0.entries.count } }
    func reset() { state.withLock { $0 = State() } }
}
