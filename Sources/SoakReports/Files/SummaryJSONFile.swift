import Foundation

/// `summary.json`: the report as data (`Reports/README.md`).
package struct SummaryJSONFile: ReportFile {
    package let name = "summary.json"
    package init() {}
    package func contents(of report: ReportContents) throws -> Data? { try AtomicFile.json(report.summary) }
}
