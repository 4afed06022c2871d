import Foundation

/// `report.html`: ``HTMLReport/run(_:attempts:earlySlackSeconds:)``.
package struct HTMLReportFile: ReportFile {
    package let name = "report.html"
    package init() {}
    package func contents(of report: ReportContents) throws -> Data? {
        Data(
            HTMLReport.run(report.summary, attempts: report.attempts, earlySlackSeconds: report.earlySlackSeconds)
                .utf8)
    }
}
