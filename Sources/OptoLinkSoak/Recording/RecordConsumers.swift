import SoakVerdicts

/// The fixed list of what consumes the recorder's records, each called in turn, synchronously,
/// under the recorder's lock: no queue, copy or allocation per record on the way.
struct RecordConsumers: RecordConsumer {
    /// `attempts.csv` and `calls.csv`.
    let csv: RecordCSVFiles
    /// The verdicts' live passes and the summary notes.
    let feed: RecordFeed
    /// Counts and histograms for `summary.json`, live metrics and live thresholds.
    var aggregate: RunAggregate
    /// The progress line's numbers.
    var progress: ProgressTally
    /// The latest successful write: how far a ledger read after the run must reach.
    var ledgerReach = LedgerReach()

    init(csv: RecordCSVFiles, feed: RecordFeed, aggregate: RunAggregate) {
        self.csv = csv
        self.feed = feed
        self.aggregate = aggregate
        progress = ProgressTally(lateThreshold: aggregate.lateThreshold)
    }

    mutating func consume(_ record: RecorderRecord) {
        csv.consume(record)
        feed.consume(record)
        aggregate.consume(record)
        progress.consume(record)
        if case .attempt(let attempt, _) = record { ledgerReach.take(attempt) }
    }
}
