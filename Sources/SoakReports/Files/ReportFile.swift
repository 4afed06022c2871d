import Foundation
import SoakRecords
import SoakVerdicts

/// What every file of a report directory is written from: the judged summary and what the
/// run or merge had beside it.
package struct ReportContents: Sendable {
    /// The report's `summary.json`, judged and settled.
    package var summary: SoakSummary
    /// The profile as it ran (flags applied), written as `profile.json`.
    package var profile: any Encodable & Sendable
    /// The profile's back-off tolerances, for the back-off chart.
    package var backoff: BackoffTolerances
    /// Every attempt, for the per-attempt charts; `nil` when they are left out (large runs).
    package var attempts: [AttemptRecord]?
    /// A shard's manifest (`run --shard`), else `nil`.
    package var shardManifest: (any Encodable & Sendable)?

    package init(
        summary: SoakSummary, profile: any Encodable & Sendable, backoff: BackoffTolerances,
        attempts: [AttemptRecord]?, shardManifest: (any Encodable & Sendable)? = nil
    ) {
        self.summary = summary
        self.profile = profile
        self.backoff = backoff
        self.attempts = attempts
        self.shardManifest = shardManifest
    }
}

/// One file of a report directory, in one format. A new format is one type conforming to this
/// (beside its renderer) and one line in the report's list of files (`ReportFiles.all` in
/// OptoLinkSoak).
package protocol ReportFile: Sendable {
    /// The file's name in the report directory.
    var name: String { get }
    /// The file's bytes, or `nil` when this report has no such file.
    /// - Throws: an encoding error.
    func contents(of report: ReportContents) throws -> Data?
}
