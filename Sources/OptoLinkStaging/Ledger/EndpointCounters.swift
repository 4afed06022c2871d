import Synchronization

/// Requests per endpoint by final status (or `reset` / `closed`), and faults that answered per
/// endpoint by kind (`outage_refuse` / `outage_reset` for outages), for tests and the soak tester.
final class EndpointCounters: Sendable {
    private let counts = Mutex([StagingEndpoint: [Int: Int]]())
    private let faults = Mutex([StagingEndpoint: [String: Int]]())

    /// Counts one fault that shaped an answer (after-commit faults that passed a rejection through are not counted).
    func recordFault(_ endpoint: StagingEndpoint, _ kind: StagingFaultKind) {
        faults.withLock { $0[endpoint, default: [:]][kind.rawValue, default: 0] += 1 }
    }

    /// Counts one request an outage refused or reset.
    func recordOutage(_ endpoint: StagingEndpoint, _ mode: StagingOutageMode) {
        faults.withLock { $0[endpoint, default: [:]]["outage_" + mode.rawValue, default: 0] += 1 }
    }

    func faultSnapshot() -> [String: [String: Int]] {
        let copy = faults.withLock { $0 }
        var out: [String: [String: Int]] = [:]
        for (endpoint, byKind) in copy {
            out[endpoint.rawValue] = byKind
        }
        return out
    }

    /// Counts one answered request; `status` 0 stands for a connection reset, -1 for a close with no response.
    func record(_ endpoint: StagingEndpoint, status: Int) {
        counts.withLock { $0[endpoint, default: [:]][status, default: 0] += 1 }
    }

    func snapshot() -> [String: [String: Int]] {
        let copy = counts.withLock { $0 }
        var out: [String: [String: Int]] = [:]
        for (endpoint, byStatus) in copy {
            var row: [String: Int] = [:]
            for (status, n) in byStatus { row[status == 0 ? "reset" : status == -1 ? "closed" : String(status)] = n }
            out[endpoint.rawValue] = row
        }
        return out
    }

    func reset() {
        counts.withLock { $0.removeAll() }
        faults.withLock { $0.removeAll() }
    }
}
