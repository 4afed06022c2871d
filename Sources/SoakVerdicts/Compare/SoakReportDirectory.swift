import Foundation
import SoakSupport
import SoakRecords

/// A finished run's report directory, read back through the library's own report types:
/// `summary.json` as ``SoakSummary`` (its `schemaVersion` checked first), the regression rules of
/// `profile.json` when present, and `attempts.csv` on demand.
package struct SoakReportDirectory: Sendable {
    /// The `schemaVersion`s of `summary.json` this version reads.
    package static let supportedSchemaVersions: Set<Int> = [SoakSummary.currentSchemaVersion]
    /// Largest `attempts.csv` read back for the HTML report's charts (bytes): two long runs' rows
    /// read whole took gigabytes.
    package static let chartAttemptsLimitBytes = 32 * 1_048_576

    package var url: URL
    package var summary: SoakSummary
    /// The `expect.regression` rules of the run's effective profile (`profile.json`); `nil` for
    /// reports of older versions, which have no `profile.json`.
    package var profileRegression: [String]?
    /// Every attempt's and finished call's latency with its start time, from `attempts.csv` and
    /// `calls.csv` (what `compare` judges latency on); `nil` when `attempts.csv` cannot be read.
    package var samples: LatencySamples?

    /// Reads `directory/summary.json`, and `profile.json` when there through `readRegression`
    /// (the profile decoder, which throws for a profile that does not decode).
    /// - Throws: ``SoakReportError`` naming the file: missing, not JSON, an unknown
    ///   `schemaVersion`, or a field that does not decode.
    package static func load(
        _ directory: URL, profileRegression readRegression: (Data) throws -> [String]
    ) throws -> SoakReportDirectory {
        let file = directory.appendingPathComponent("summary.json")
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory)
            throw SoakReportError(
                message: !exists
                    ? "\(directory.path): no such report directory"
                    : !isDirectory.boolValue
                        ? "\(directory.path): not a directory (give the report directory, not a file in it)"
                        : "\(file.path): cannot read (\(error.localizedDescription)); is this a finished run's report?")
        }
        struct Version: Decodable { var schemaVersion: Int? }
        guard let version = try? JSONDecoder().decode(Version.self, from: data) else {
            throw SoakReportError(message: "\(file.path): not a JSON object")
        }
        guard let schema = version.schemaVersion else {
            throw SoakReportError(message: "\(file.path): no schemaVersion (not an optolink-soak summary)")
        }
        guard supportedSchemaVersions.contains(schema) else {
            let known = supportedSchemaVersions.sorted().map(String.init).joined(separator: ", ")
            throw SoakReportError(
                message: "\(file.path): schemaVersion \(schema) is not supported by optolink-soak "
                    + "\(SoakVersion.current) (it reads \(known)); compare with the version that wrote it")
        }
        let summary: SoakSummary
        do {
            summary = try JSONDecoder().decode(SoakSummary.self, from: data)
        } catch let error as DecodingError {
            throw SoakReportError(message: "\(file.path): \(error.readableDescription)")
        }
        // No profile.json: the default regression rules apply. One that is there but does not decode
        // is an error: dropping its `expect.regression` rules silently would let a regression pass.
        let profileURL = directory.appendingPathComponent("profile.json")
        var profileRegression: [String]? = nil
        if let profileData = try? Data(contentsOf: profileURL) {
            do {
                profileRegression = try readRegression(profileData)
            } catch {
                throw SoakReportError(message: "\(profileURL.path): \(error)")
            }
        }
        return SoakReportDirectory(
            url: directory, summary: summary, profileRegression: profileRegression,
            samples: LatencySamples.read(directory: directory))
    }

    /// The rows of `attempts.csv` (or `attempts.csv.partial`) for the charts, or `nil` when neither
    /// can be read or the file is over ``chartAttemptsLimitBytes`` (32 MB, as for `run` and `merge`).
    package func attempts() -> [AttemptRecord]? {
        for name in ["attempts.csv", "attempts.csv.partial"] {
            let file = url.appendingPathComponent(name)
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? nil
            guard let size else { continue }
            if size > Self.chartAttemptsLimitBytes { return nil }
            if let rows = try? ReportCSVReader.attempts(file) { return rows }
        }
        return nil
    }
}

/// A report directory that cannot be read (exit code 2 for `compare`).
public struct SoakReportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The problem, naming the report directory or file.
    public var message: String

    package init(message: String) { self.message = message }
    /// The same as ``message``.
    public var description: String { message }
}
