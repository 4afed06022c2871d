/// Which answers the contract expects from each endpoint (CONTRACT §1), for `http.failed`:
/// k6's idea of a failed request, with the contract as the list of expected statuses.
///
/// | Endpoint | Expected |
/// |---|---|
/// | `POST /match` | 201, 429 |
/// | `GET …/data`, `POST /sdk/*` | 200, 429 |
///
/// A 429 is expected: rate limits are part of the contract and the soak tester's subject.
/// Anything else is a failed attempt — a 401 (bad or revoked key), a 403 (a SERVER key on
/// `/sdk/*`), a 404 (wrong base path, unknown device), a 5xx, or no response at all. An attempt
/// the client cancelled (the run stopping, a launch ending) is neither.
package enum ContractStatus {
    /// The success status of `endpoint`.
    package static func success(of endpoint: ContractEndpoint) -> Int {
        endpoint == .match ? 201 : 200
    }

    /// Whether the contract expects `status` from `endpoint`.
    package static func isExpected(_ status: Int, from endpoint: ContractEndpoint) -> Bool {
        status == 429 || status == success(of: endpoint)
    }

    /// Whether an attempt failed: an unexpected status, or no response that the client did not cancel.
    package static func isFailed(status: Int?, errorKind: AttemptErrorKind?, endpoint: ContractEndpoint) -> Bool {
        if let status { return !isExpected(status, from: endpoint) }
        return errorKind?.isCancellation != true
    }

    /// Failed attempts in a `byStatus` map (status text or error kind → count).
    package static func failedCount(_ byStatus: [String: Int], endpoint: ContractEndpoint) -> Int {
        byStatus.reduce(0) { sum, entry in
            let failed =
                Int(entry.key).map { !isExpected($0, from: endpoint) }
                ?? (AttemptErrorKind(rawValue: entry.key)?.isCancellation != true)
            return sum + (failed ? entry.value : 0)
        }
    }
}
