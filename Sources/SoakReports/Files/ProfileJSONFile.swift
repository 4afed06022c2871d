import Foundation

/// `profile.json`: the profile as it ran, flags applied (what `compare` checks the runs against).
package struct ProfileJSONFile: ReportFile {
    package let name = "profile.json"
    package init() {}
    package func contents(of report: ReportContents) throws -> Data? { try AtomicFile.json(report.profile) }
}
