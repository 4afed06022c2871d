import SoakRecords

/// Synthetic records for the verdict unit tests (a library, so every soak test target shares it).
package enum Fixture {
    package static func attempt(
        _ endpoint: ContractEndpoint = .events, device: String = "d000001", launch: Int = 1, call: UInt64 = 1,
        attempt: Int = 1, start: Double, end: Double? = nil, status: Int? = 200, error: AttemptErrorKind? = nil,
        retryAfter: Int? = nil, corr: String? = nil, ip: String? = nil
    ) -> AttemptRecord {
        AttemptRecord(
            device: device, launch: launch, callId: call, endpoint: endpoint, attempt: attempt, intendedStart: start,
            actualStart: start, end: end ?? start + 0.01, status: status,
            errorKind: status == nil ? (error ?? .timedOut) : nil,
            retryAfterSeconds: retryAfter, requestBytes: 100, responseBytes: 50, correlationId: corr, clientIP: ip)
    }

    /// One step of a call: the attempt's status (nil = no response) and the gap before the next.
    package struct Step {
        package var status: Int?
        package var retryAfter: Int? = nil
        package var gapAfter: Double = 0
        package var duration: Double = 0.01

        package init(status: Int?, retryAfter: Int? = nil, gapAfter: Double = 0, duration: Double = 0.01) {
            self.status = status
            self.retryAfter = retryAfter
            self.gapAfter = gapAfter
            self.duration = duration
        }
    }

    /// The attempts of one call starting at `start`, each next attempt `gapAfter` after the previous end.
    package static func call(
        _ endpoint: ContractEndpoint, device: String = "d000001", call: UInt64 = 1, start: Double = 1,
        _ steps: [Step]
    ) -> [AttemptRecord] {
        var time = start
        var records: [AttemptRecord] = []
        for (index, step) in steps.enumerated() {
            records.append(
                attempt(
                    endpoint, device: device, call: call, attempt: index + 1, start: time, end: time + step.duration,
                    status: step.status, retryAfter: step.retryAfter))
            time += step.duration + step.gapAfter
        }
        return records
    }

    package static func callRecord(
        _ endpoint: ContractEndpoint, device: String = "d000001", call: UInt64 = 1, attempts: Int = 1,
        outcome: CallOutcome = .ok, corr: String? = nil
    ) -> CallRecord {
        CallRecord(
            device: device, launch: 1, callId: call, endpoint: endpoint, attempts: attempts, intendedStart: 0, start: 0,
            end: 0.01, outcome: outcome, finalStatus: outcome == .ok ? 200 : 500, correlationId: corr)
    }

    package static func ledger(_ endpoint: String, deviceId: String, corr: String? = nil, at: Double = 1_000)
        -> LedgerRow
    {
        LedgerRow(
            sequence: 0, arrivedAt: at, endpoint: endpoint, deviceId: deviceId, apiKeySuffix: "client",
            eventName: endpoint == "events" ? "purchase" : nil, properties: corr.map { ["opl_corr": $0] })
    }

    /// Hits on one bucket: (start time, status, N), each 1 ms long.
    package static func hits(
        _ list: [(Double, Int?, Int?)], _ endpoint: ContractEndpoint = .match, ip: String? = "10.0.0.1"
    ) -> [AttemptRecord] {
        list.enumerated().map { index, hit in
            Fixture.attempt(
                endpoint, device: "d\(index)", call: UInt64(index + 1), start: hit.0, end: hit.0 + 0.001, status: hit.1,
                retryAfter: hit.2, ip: ip)
        }
    }

    /// Nearest rank ⌈p/100 · count⌉ (at least 1) in thousandths of a percent, integers only:
    /// the tests' own reference, independent of `NearestRank`.
    package static func referenceRank(_ p: Double, count: Int) -> Int {
        let thousandths = Int((p * 1000).rounded())
        return min(count, max(1, (thousandths * count + 99_999) / 100_000))
    }

    /// Nearest-rank percentile of sorted values (the definition the histogram approximates).
    package static func exactPercentile(_ sorted: [Double], _ p: Double) -> Double {
        sorted[referenceRank(p, count: sorted.count) - 1]
    }
}
