import Foundation
import SoakRecords

/// One run's latencies with the time each started, per series (`<endpoint>.attempt`,
/// `<endpoint>.call`): what `compare` cuts into blocks of a few seconds, so that each block's
/// quantile is one observation and the run-to-run spread of those observations can be estimated.
package struct LatencySamples: Sendable, Equatable {
    /// One latency: when it started (seconds since the run's start) and how long it took (seconds).
    package struct Sample: Sendable, Equatable {
        package var t: Double
        package var seconds: Double

        package init(t: Double, seconds: Double) {
            self.t = t
            self.seconds = seconds
        }
    }

    /// Series name → its samples, in the order they were added.
    package private(set) var series: [String: [Sample]] = [:]

    package init() {}

    /// The series name of one endpoint's `attempt` or `call` latency.
    package static func key(endpoint: String, kind: String) -> String { "\(endpoint).\(kind)" }

    /// Adds one latency; non-finite or negative values are skipped.
    package mutating func add(_ seconds: Double, startedAt t: Double, to key: String) {
        guard seconds.isFinite, seconds >= 0, t.isFinite else { return }
        series[key, default: []].append(Sample(t: t, seconds: seconds))
    }

    /// Attempt latency (`end − actualStart`) of every attempt, call latency (`end − intendedStart`)
    /// of every finished call: the same values the summary's histograms hold.
    package init(attempts: some Sequence<AttemptRecord>, calls: some Sequence<CallRecord>) {
        for a in attempts { add(attempt: a) }
        for c in calls { add(call: c) }
    }

    mutating func add(attempt a: AttemptRecord) {
        add(
            a.end - a.actualStart, startedAt: a.actualStart,
            to: Self.key(endpoint: a.endpoint.rawValue, kind: "attempt"))
    }

    mutating func add(call c: CallRecord) {
        guard c.outcome.isFinished else { return }
        add(
            c.end - c.intendedStart, startedAt: c.intendedStart,
            to: Self.key(endpoint: c.endpoint.rawValue, kind: "call"))
    }

    /// Reads `attempts.csv` (or `attempts.csv.partial`) and `calls.csv` of a report directory one row
    /// at a time; `nil` when `attempts.csv` cannot be read (a report without per-request rows).
    package static func read(directory: URL) -> LatencySamples? {
        for name in ["attempts.csv", "attempts.csv.partial"] {
            guard var attempts = try? CSVRecordReader.attempts(directory.appendingPathComponent(name)) else {
                continue
            }
            var samples = LatencySamples()
            do {
                while let row = try attempts.next() { samples.add(attempt: row) }
            } catch {
                return nil
            }
            // Without calls.csv only the call latencies are missing; they are then not judged.
            if var calls = try? CSVRecordReader.calls(directory.appendingPathComponent("calls.csv")) {
                while let row = try? calls.next() { samples.add(call: row) }
            }
            return samples
        }
        return nil
    }

    /// The `quantile` (0…1) of each block of `blockSeconds` of series `key` that holds at least
    /// `minSamples` latencies, in time order. Blocks are widened (a multiple of `blockSeconds`) so
    /// that there are at most `maxBlocks`, which keeps the pairwise block statistics small for long runs.
    package func blockQuantiles(
        _ key: String, quantile: Double, blockSeconds: Double, minSamples: Int, maxBlocks: Int = 600
    ) -> (blockSeconds: Double, values: [Double]) {
        guard let samples = series[key], !samples.isEmpty, blockSeconds > 0 else { return (blockSeconds, []) }
        let last = samples.map(\.t).max() ?? 0
        let width = blockSeconds * max(1, (last / blockSeconds / Double(max(1, maxBlocks))).rounded(.up))
        var blocks: [Int: [Double]] = [:]
        for s in samples { blocks[Int((max(0, s.t) / width).rounded(.down)), default: []].append(s.seconds) }
        let values = blocks.keys.sorted().compactMap { index -> Double? in
            guard let block = blocks[index], block.count >= max(1, minSamples) else { return nil }
            return Self.quantile(block.sorted(), quantile)
        }
        return (width, values)
    }

    /// The nearest-rank quantile of sorted values.
    static func quantile(_ sorted: [Double], _ q: Double) -> Double {
        let rank = Int((q * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }
}
