import Synchronization

/// Requests per endpoint by final status (or `reset`), and faults that answered per endpoint
/// by kind, for tests and the soak tester.
final class EndpointCounters: Sendable {
    private let counts = Mutex([StagingEndpoint: [Int: Int]]())
    private let faults = Mutex([StagingEndpoint: [StagingFaultKind: Int]]())

    /// Counts one fault that shaped an answer (after-commit faults that passed a rejection through are not counted).
    func recordFault(_ endpoint: StagingEndpoint, _ kind: StagingFaultKind) {
        faults.withLock { $0[endpoint, default: [:]][kind, default: 0] += 1 }
    }

    func faultSnapshot() -> [String: [String: Int]] {
        let copy = faults.withLock { $0 }
        var out: [String: [String: Int]] = [:]
        for (endpoint, byKind) in copy {
            out[endpoint.rawValue] = Dictionary(uniqueKeysWithValues: byKind.map { ($0.key.rawValue, $0.value) })
        }
        return out
    }

    /// Counts one answered request; `status` 0 stands for a connection reset.
    func record(_ endpoint: StagingEndpoint, status: Int) {
        counts.withLock { $0[endpoint, default: [:]][status, default: 0] += 1 }
    }

    func snapshot() -> [String: [String: Int]] {
        let copy = counts.withLock { $0 }
        var out: [String: [String: Int]] = [:]
        for (endpoint, byStatus) in copy {
            var row: [String: Int] = [:]
            for (status, n) in byStatus { row[status == 0 ? "reset" : String(status)] = n }
            out[endpoint.rawValue] = row
        }
        return out
    }

    func reset() {
        counts.withLock { $0.removeAll() }
        faults.withLock { $0.removeAll() }
    }
}
