/// One shard of a plan: `run --shard I/N` runs the journeys `k` of the plan with `k mod N == I`
/// (open model: the arrival schedule's k-th arrival; closed model: worker `k`), on the devices
/// `d` with `d mod N == I`. Device ids, seeds and client IPs stay global (every shard builds the
/// whole population and the whole schedule and skips what is not its own), so the shards
/// together run exactly the unsharded plan.
package struct SoakShard: Sendable, Equatable, Hashable, Codable, CustomStringConvertible {
    /// 0-based shard index, below `count`.
    package var index: Int
    /// Number of shards (1 = the whole plan).
    package var count: Int

    /// The whole plan as one shard (`0/1`).
    package static let whole = SoakShard(index: 0, count: 1)

    package init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Parses `I/N` (0 ≤ I < N ≤ 10000).
    /// - Throws: ``SoakUsageError`` naming `--shard` when the text is not of that form.
    package init(parsing text: String) throws {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]),
            SoakShard(index: index, count: count).isWithinBounds
        else {
            throw SoakUsageError(
                message: "--shard: \"\(text)\" is not I/N with 0 ≤ I < N ≤ 10000 (I is 0-based, e.g. 0/3, 1/3, 2/3)")
        }
        self.init(index: index, count: count)
    }

    /// Whether `0 ≤ index < count ≤ 10000`, the shards a plan can have.
    package var isWithinBounds: Bool { (1...10_000).contains(count) && (0..<count).contains(index) }

    /// Whether journey (or closed-model worker) `k` of the plan is this shard's.
    package func owns(_ k: Int) -> Bool { count <= 1 || k % count == index }

    /// `I/N`.
    package var description: String { "\(index)/\(count)" }

    /// This shard's part of a journey budget of `total` (`load.iterations` in the closed
    /// model, where workers draw from one budget): an even split, the first `total mod N`
    /// shards one more.
    package func share(of total: Int) -> Int {
        guard count > 1, total < Int.max else { return total }
        return total / count + (index < total % count ? 1 : 0)
    }
}
