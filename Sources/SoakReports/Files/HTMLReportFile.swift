import Foundation

/// `report.html`: ``HTMLReport/run(_:attempts:backoff:)``.
package struct HTMLReportFile: ReportFile {
    package let name = "report.html"
    package init() {}
    package func contents(of report: ReportContents) throws -> Data? {
        Data(
            HTMLReport.run(report.summary, attempts: report.attempts, backoff: report.backoff)
                .utf8)
    }
}
