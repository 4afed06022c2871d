import Foundation
import SoakReports

/// `shard.json`: a shard's ``ShardManifest``, written first so `merge` finds every shard that
/// finished its report.
struct ShardManifestFile: ReportFile {
    let name = ShardManifest.fileName
    func contents(of report: ReportContents) throws -> Data? {
        try report.shardManifest.map { try AtomicFile.json($0) }
    }
}
