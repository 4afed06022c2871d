import Foundation
import SoakVerdicts

extension SoakReportDirectory {
    /// Reads `directory/summary.json`, and `profile.json` when there (a profile that does not
    /// decode is an error: dropping its `expect.regression` rules silently would let a regression pass).
    /// - Throws: ``SoakReportError`` naming the file: missing, not JSON, an unknown
    ///   `schemaVersion`, or a field that does not decode.
    package static func load(_ directory: URL) throws -> SoakReportDirectory {
        try load(directory, profileRegression: { try SoakProfile.decode($0).expect.regression })
    }
}

extension SoakSummary {
    /// Reads a report's `summary.json`: give the report directory, or the `summary.json` in it.
    /// - Throws: ``SoakReportError`` naming the path: missing, not JSON, an unknown
    ///   `schemaVersion`, or a field that does not decode.
    public static func load(contentsOf url: URL) throws -> SoakSummary {
        let directory = url.lastPathComponent == "summary.json" ? url.deletingLastPathComponent() : url
        return try SoakReportDirectory.load(directory).summary
    }
}
