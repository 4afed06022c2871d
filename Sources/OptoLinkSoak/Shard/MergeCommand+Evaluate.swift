import Foundation
import SoakRecords
import SoakReports
import SoakVerdicts

extension MergeCommand {
    /// How far back in run time each shard's reorder buffer holds rows at first, in seconds;
    /// a shard whose rows lag further (a session call closed at its launch's end) makes the
    /// merge read again with a window twice that lag, up to ``maxReorderWindowSeconds``.
    static let reorderWindowSeconds = 10.0
    static let maxReorderWindowSeconds = 900.0
    /// The shards' `attempts.csv` bytes up to which the merged `report.html` gets its
    /// per-attempt charts (the rows are then kept in memory), as `run` does for one file.
    static var chartAttemptsLimitBytes: Int { SoakRun.chartAttemptsLimitBytes }

    /// How many attempts to keep for the charts: all when the shards' files are small enough, else none.
    static func chartAttemptLimit(_ plan: Plan) -> Int {
        let bytes = plan.shards.reduce(0) { total, shard in
            let path = shard.url.appendingPathComponent("attempts.csv").path
            return total + ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        }
        return bytes <= chartAttemptsLimitBytes ? Int.max : 0
    }

    /// The verdicts and what else the one pass over the records gave.
    struct Evaluated {
        var report: VerdictsReport
        var notes: [String]
        var attempts: [AttemptRecord]?
        var streamed: Bool
        var fallbackReason: String?
        /// The reorder window the stream needed, seconds (`nil` when sorted in memory).
        var window: Double?
        /// What could not be written to the merged `attempts.csv` and `calls.csv`.
        var fileProblems: [String] = []
    }

    /// Runs every verdict over the union of the shards' records: streamed from the CSVs in time
    /// order with a reorder window that widens to fit the rows' lag, or — past `maxWindow` —
    /// read whole and sorted. Every way gives the same records in the same order; with
    /// `recordsDirectory` they are also written there as `attempts.csv` and `calls.csv`
    /// (``MergedRecordFiles``), in that order.
    /// - Throws: ``ReportIOError`` when a shard's CSV cannot be read or has a malformed row;
    ///   the file-system error when the merged CSVs cannot be created.
    static func evaluate(
        _ plan: Plan, shifts: [Double], attribution: [AttributionRecord], context: VerdictContext,
        window: Double = reorderWindowSeconds, maxWindow: Double = maxReorderWindowSeconds,
        recordsDirectory: URL? = nil
    ) throws -> Evaluated {
        var window = window
        while true {
            let files = try recordsDirectory.map(MergedRecordFiles.init(directory:))
            do {
                var evaluated = try evaluateStreaming(
                    plan, shifts: shifts, attribution: attribution, context: context, window: window, files: files)
                evaluated.window = window
                return evaluated.closing(files)
            } catch let violation as StreamOrderViolation {
                let wider = Swift.max(window * 2, violation.lag * 2)
                guard wider <= maxWindow else {
                    let evaluated = try evaluateSorted(
                        plan, shifts: shifts, attribution: attribution, context: context,
                        reason: "\(violation.path) row \(violation.row) ends \(formatSeconds(violation.lag)) s before "
                            + "rows written ahead of it, beyond the \(formatSeconds(maxWindow)) s reorder window",
                        files: files)
                    return evaluated.closing(files)
                }
                window = wider
            }
        }
    }

    /// One streamed pass with a reorder window of `window` seconds.
    /// - Throws: ``StreamOrderViolation`` when a row lags further; ``ReportIOError``.
    private static func evaluateStreaming(
        _ plan: Plan, shifts: [Double], attribution: [AttributionRecord], context: VerdictContext, window: Double,
        files: MergedRecordFiles?
    ) throws -> Evaluated {
        var streams: [ShardRecordStream] = []
        for (position, shard) in plan.shards.enumerated() {
            streams.append(
                try ShardRecordStream(directory: shard.url, position: position, shift: shifts[position], window: window)
            )
        }
        let tap = MergedRecordTap(attemptLimit: chartAttemptLimit(plan), files: files)
        var report = Verdicts.evaluate(
            stream: MergedRecordSequence(streams: streams, attribution: attribution, tap: tap), context: context)
        if let error = tap.error { throw error }
        report.ignoredAttempts = tap.ignoredAttempts
        return Evaluated(report: report, notes: tap.notes.notes(), attempts: tap.attempts, streamed: true)
    }

    /// Every shard's rows read whole, moved by their shifts and sorted (the stream's order, so
    /// the same verdicts; only the memory differs).
    private static func evaluateSorted(
        _ plan: Plan, shifts: [Double], attribution: [AttributionRecord], context: VerdictContext, reason: String,
        files: MergedRecordFiles?
    ) throws -> Evaluated {
        var attempts: [AttemptRecord] = []
        var calls: [CallRecord] = []
        for (position, shard) in plan.shards.enumerated() {
            let shift = shifts[position]
            attempts += try ReportCSVReader.attempts(shard.url.appendingPathComponent("attempts.csv")).map {
                var a = $0
                a.intendedStart += shift
                a.actualStart += shift
                a.end += shift
                return a
            }
            calls += try ReportCSVReader.calls(shard.url.appendingPathComponent("calls.csv")).map {
                var c = $0
                c.intendedStart += shift
                c.start += shift
                c.end += shift
                return c
            }
        }
        if let files {
            for record in Verdicts.timeOrdered(attempts: attempts, calls: calls) { files.write(record) }
        }
        let inputs = VerdictInputs(
            attempts: attempts, calls: calls, ledger: context.ledger, attribution: attribution,
            configuration: context.configuration, maxRetries: context.maxRetries,
            runStartEpoch: context.runStartEpoch, deviceIds: context.deviceIds,
            launchDeviceIds: context.launchDeviceIds)
        return Evaluated(
            report: Verdicts.evaluate(inputs), notes: SummaryNotes.build(attempts: attempts, calls: calls),
            attempts: chartAttemptLimit(plan) > 0 ? attempts : nil, streamed: false,
            fallbackReason: reason)
    }
}

extension MergeCommand.Evaluated {
    /// This result with the merged CSVs closed and any write failure noted.
    fileprivate func closing(_ files: MergedRecordFiles?) -> Self {
        guard let files else { return self }
        var result = self
        result.fileProblems = files.close()
        return result
    }
}
