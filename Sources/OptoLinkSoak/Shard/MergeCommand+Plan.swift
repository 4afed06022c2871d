import Foundation
import SoakRecords
import SoakReports
import SoakVerdicts

extension MergeCommand {
    /// The checked set of shards: one plan, each shard once, sorted by index.
    struct Plan {
        var shards: [(url: URL, manifest: ShardManifest)]
        var count: Int
        var missing: [Int]

        /// - Throws: ``SoakReportError`` naming the directories or shards: different plans,
        ///   different shard counts, a shard given twice, or missing or unhealthy shards without
        ///   `allowPartial`.
        static func check(_ given: [(url: URL, manifest: ShardManifest)], allowPartial: Bool) throws -> Plan {
            guard let first = given.first else { throw SoakReportError(message: "merge: no shard given") }
            let hashes = Set(given.map(\.manifest.planHash))
            if hashes.count > 1 {
                let listing = given.map { "\($0.url.path): \($0.manifest.planHash.prefix(12))" }
                throw SoakReportError(
                    message: "merge: the shards are of different plans (profile hash differs; same profile, flags "
                        + "and seed are needed): " + listing.joined(separator: ", "))
            }
            let counts = Set(given.map(\.manifest.shard.count))
            if counts.count > 1 {
                let listing = given.map { "\($0.url.path): \($0.manifest.shard)" }
                throw SoakReportError(
                    message: "merge: the shards split the plan differently: " + listing.joined(separator: ", "))
            }
            var seen: [Int: URL] = [:]
            for shard in given {
                if let other = seen[shard.manifest.shard.index] {
                    throw SoakReportError(
                        message: "merge: shard \(shard.manifest.shard) is given twice (\(other.path) and "
                            + "\(shard.url.path)); each shard must be merged once")
                }
                seen[shard.manifest.shard.index] = shard.url
            }
            let count = first.manifest.shard.count
            // Shards of one run start together (one --start-at, or within seconds); starts further
            // apart than the longest shard plus an hour are another run of the same plan.
            let starts = given.map(\.manifest.startEpoch)
            let longest = given.map(\.manifest.activeSeconds).max() ?? 0
            if let earliest = starts.min(), let latest = starts.max(), latest - earliest > longest + 3_600 {
                throw SoakReportError(
                    message: "merge: the shards started \(formatSeconds(latest - earliest)) s apart, longer than a "
                        + "shard ran: they are not one run. Run all shards with one --start-at")
            }
            let unhealthy = given.flatMap { ShardHealth.problems($0.manifest.health, shard: $0.manifest.shard) }
            if !unhealthy.isEmpty && !allowPartial {
                throw SoakReportError(
                    message: "merge: " + unhealthy.joined(separator: "; ")
                        + ". A shard that failed its own health check did not measure the backend as planned; "
                        + "pass --allow-partial to merge it anyway (the report then names it)")
            }
            let missing = (0..<count).filter { seen[$0] == nil }
            if !missing.isEmpty && !allowPartial {
                throw SoakReportError(
                    message: "merge: missing shard\(missing.count == 1 ? "" : "s") "
                        + missing.map { "\($0)/\(count)" }.joined(separator: ", ")
                        + " of the plan; the merged report would judge only part of the load. Pass --allow-partial "
                        + "to merge what there is (the report then names the missing shards)")
            }
            return Plan(
                shards: given.sorted { $0.manifest.shard.index < $1.manifest.shard.index }, count: count,
                missing: missing)
        }
    }
}
