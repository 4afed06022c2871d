import Synchronization

/// Requests per endpoint by final status (or `reset`), for tests and the soak tester.
final class EndpointCounters: Sendable {
    private let counts = Mutex([StagingEndpoint: [Int: Int]]())

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

    func reset() { counts.withLock { $0.removeAll() } }
}
