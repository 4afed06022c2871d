import Foundation
import SoakRecords

/// How far a ledger read after the run reaches, when it had not caught up with the run's writes.
///
/// A ledger the backend still writes (a remote one exported while the run ends) can stop before
/// the run's last writes. A successful call without a row that ended after the ledger's last row
/// is then "not covered": its row may still come, so it is never counted as lost.
package struct LedgerCoverage: Sendable, Codable, Equatable {
    /// The latest arrival in the ledger, run seconds; `nil` when the ledger holds no row.
    package var ledgerReachesSeconds: Double?
    /// When the run's last successful write attempt started, run seconds.
    package var lastWriteSeconds: Double
    /// Successful calls with no row that ended after the ledger's last row.
    package var notCovered: Int

    package init(ledgerReachesSeconds: Double?, lastWriteSeconds: Double, notCovered: Int) {
        self.ledgerReachesSeconds = ledgerReachesSeconds
        self.lastWriteSeconds = lastWriteSeconds
        self.notCovered = notCovered
    }

    /// The coverage in words, for the report and for the thresholds it leaves unjudged.
    package var description: String {
        let reach = ledgerReachesSeconds.map { String(format: "reaches run second %.2f", $0) } ?? "holds no row"
        return "the ledger is incomplete: it \(reach), the run's last successful write started at run second "
            + String(format: "%.2f", lastWriteSeconds) + "; \(notCovered) successful call(s) after its last row "
            + "are not covered (not counted as lost; --ledger-wait SECONDS waits longer for it)"
    }
}

/// What a reconciliation pass sees of a ledger's reach: its latest row and the run's latest
/// successful write. The ledger has caught up when a row arrived at or after that write started.
/// The runner keeps one too: the last successful write is how far it waits for a ledger file.
package struct LedgerReach: Sendable {
    /// Arrival of the latest row, seconds since the Unix epoch.
    package private(set) var latestRowEpoch = -Double.infinity
    /// Start of the latest successful write (a 2xx attempt, or a successful call), run seconds.
    package private(set) var lastWriteSeconds = -Double.infinity

    package init() {}

    /// How far a server clock may lag the run's and the ledger still count as caught up.
    static let clockTolerance = 0.1

    package mutating func take(_ entry: LedgerRow) {
        if entry.arrivedAt.isFinite { latestRowEpoch = max(latestRowEpoch, entry.arrivedAt) }
    }

    package mutating func take(_ attempt: AttemptRecord) {
        guard attempt.endpoint.writesLedger, let status = attempt.status, (200..<300).contains(status) else { return }
        lastWriteSeconds = max(lastWriteSeconds, attempt.actualStart)
    }

    package mutating func take(_ call: CallRecord) {
        guard call.endpoint.writesLedger, call.outcome.isSuccess else { return }
        lastWriteSeconds = max(lastWriteSeconds, call.start)
    }

    /// The run second after which a successful call without a row is not covered, or `nil` when
    /// the ledger has caught up (or the run made no successful write).
    func coveredUntil(runStartEpoch: Double, tolerance: Double) -> Double? {
        guard lastWriteSeconds.isFinite else { return nil }
        let reach = latestRowEpoch - runStartEpoch
        return reach >= lastWriteSeconds - max(tolerance, Self.clockTolerance) ? nil : reach
    }
}
