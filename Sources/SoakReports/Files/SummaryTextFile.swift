import Foundation

/// `summary.txt`: ``SummaryText``, as the run prints it at its end.
package struct SummaryTextFile: ReportFile {
    package let name = "summary.txt"
    package init() {}
    package func contents(of report: ReportContents) throws -> Data? { Data(SummaryText.render(report.summary).utf8) }
}
