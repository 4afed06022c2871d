import Foundation
import SoakReports

/// The files of a report directory, in the order they are written. A new report format is one
/// ``ReportFile`` type and one line here.
package enum ReportFiles {
    package static let all: [any ReportFile] = [
        ShardManifestFile(),
        SummaryJSONFile(),
        ProfileJSONFile(),
        SummaryTextFile(),
        HTMLReportFile(),
    ]

    /// Writes every file `report` has into `directory`, each atomically.
    /// - Throws: the error of the first file that cannot be encoded or written.
    static func write(_ report: ReportContents, to directory: URL) throws {
        for file in all {
            guard let data = try file.contents(of: report) else { continue }
            try AtomicFile.write(data, to: directory.appendingPathComponent(file.name))
        }
    }
}
