import Foundation
import SoakSupport
import SoakRecords
import SoakVerdicts

/// `shard.json`: what `merge` needs from one shard besides its CSVs — who it is (run id, shard
/// index and count, plan hash), the effective profile, the recorder's aggregates in their
/// lossless form (``RecorderTally``: histogram bucket counts, not percentiles), and the
/// non-record inputs of the verdicts (attribution outcomes, SDK `deviceId`s).
///
/// Written atomically at the end of every `run --shard` (also an interrupted one).
package struct ShardManifest: Sendable, Codable {
    /// The `schemaVersion` this version writes and reads.
    package static let currentSchemaVersion = 1
    package static let fileName = "shard.json"

    package var schemaVersion = ShardManifest.currentSchemaVersion
    package var runId: String
    package var shard: SoakShard
    /// ``ProfileFingerprint`` of the effective profile: equal for every shard of one plan.
    package var planHash: String
    /// The shard's second 0, Unix seconds (`--start-at` when given).
    package var startEpoch: Double
    package var startAt: Double?
    /// Seconds the shard started after `startAt` (0 when on time or without `--start-at`).
    package var lateSeconds: Double
    /// Seconds from second 0 to the shard's end.
    package var activeSeconds: Double
    /// Journeys the shard planned (open model) or started (closed model).
    package var scheduled: Int
    package var stopReason: StopReason
    package var interrupted: Bool
    package var backend: String
    package var baseURL: String
    package var transport: String?
    /// The effective profile (flags applied, secrets redacted); its fingerprint is `planHash`.
    package var profile: SoakProfile
    package var tally: RecorderTally
    package var attribution: [AttributionRecord]
    /// Virtual device → SDK `deviceId` of its latest install; `<device>#<launch>` → that launch's.
    package var deviceIds: [String: String]
    package var launchDeviceIds: [DeviceLaunch: String]
    package var rss: [SoakSummary.RSSSample]
    /// Report I/O problems of the shard (its CSVs are then incomplete).
    package var ioProblems: [String] = []
    /// The shard's own health rows (``ShardHealth``); `merge` refuses a shard with a failed one
    /// unless `--allow-partial`. Absent in manifests written before shards judged their health.
    package var health: [ThresholdResult]?
    /// When the shard's latest successful write attempt started, Unix seconds (`nil`: none, or a
    /// shard written before this was kept): how far `merge --ledger` waits for the ledger file.
    package var lastWriteEpoch: Double?

    /// Reads `directory/shard.json`.
    /// - Throws: ``SoakReportError`` naming the file: missing (not a shard's report), not JSON,
    ///   an unknown `schemaVersion`, or a field that does not decode.
    /// The first value no run writes (the merge would trap or allocate without bound on it), or `nil`.
    var problem: String? {
        let largestCount = 1 << 53
        if !shard.isWithinBounds {
            return "shard \(shard.index)/\(shard.count) is not I/N with 0 ≤ I < N ≤ 10000"
        }
        if !(startEpoch.isFinite && abs(startEpoch) < 1e11) { return "startEpoch \(startEpoch) is not a Unix time" }
        for (name, value) in [("lateSeconds", lateSeconds), ("activeSeconds", activeSeconds)]
        where !(value.isFinite && (0...10_000_000).contains(value)) {
            return "\(name) \(value) is not within 0…10000000 seconds"
        }
        if !(tally.interval.isFinite && (0.001...3_600).contains(tally.interval)) {
            return "tally.interval \(tally.interval) is not within 0.001…3600 seconds"
        }
        let slots = tally.intervals.map(\.slot)
        if let slot = slots.first(where: { !(0...10_000_000).contains($0) }) {
            return "tally.intervals slot \(slot) is not within 0…10000000"
        }
        let counts =
            [tally.attempts, tally.calls, tally.status429, tally.errors, tally.journeysStarted, tally.lateStarts]
            + tally.intervals.flatMap { [$0.journeys, $0.lateStarts, $0.attempts, $0.status429, $0.errors] }
            + tally.endpoints.values.flatMap { [$0.attempts, $0.calls] + Array($0.byStatus.values) }
        if let count = counts.first(where: { !(0...largestCount).contains($0) }) {
            return "a count of \(count) is not within 0…2^53"
        }
        return nil
    }

    package static func load(_ directory: URL) throws -> ShardManifest {
        let file = directory.appendingPathComponent(fileName)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) else {
            throw SoakReportError(message: "\(directory.path): no such report directory")
        }
        guard isDirectory.boolValue else {
            throw SoakReportError(message: "\(directory.path): not a directory (give a shard's report directory)")
        }
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw SoakReportError(
                message: "\(file.path): missing; \(directory.path) is not a shard's report (write one with "
                    + "`run PROFILE --shard I/N --base-url URL`), or that shard did not finish")
        }
        struct Version: Decodable { var schemaVersion: Int? }
        guard let version = try? JSONDecoder().decode(Version.self, from: data) else {
            throw SoakReportError(message: "\(file.path): not a JSON object")
        }
        guard version.schemaVersion == currentSchemaVersion else {
            throw SoakReportError(
                message: "\(file.path): schemaVersion \(version.schemaVersion.map(String.init) ?? "missing") is not "
                    + "supported (this version reads \(currentSchemaVersion)); merge with the version that wrote it")
        }
        do {
            let manifest = try JSONDecoder().decode(ShardManifest.self, from: data)
            if let problem = manifest.problem {
                throw SoakReportError(
                    message: "\(file.path): \(problem); it was not written by a run (edited or damaged)")
            }
            return manifest
        } catch let error as SoakReportError {
            throw error
        } catch let error as DecodingError {
            throw SoakReportError(message: "\(file.path): \(error.readableDescription)")
        } catch {
            throw SoakReportError(message: "\(file.path): \(error)")
        }
    }
}
