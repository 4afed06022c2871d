import Synchronization
import SoakVerdicts

/// The live verdict passes and the summary notes of a run, fed one record at a time.
///
/// Every record of a run reaches the feed from the place that applies the recorder's events in
/// order (the recorder's writer thread, or the recording thread itself when there is no writer,
/// under the recorder's lock), so the passes see the records in the order they were recorded.
/// Each record is handed to the passes at once, under the feed's own lock, which a reader
/// (``notes()``, ``finish()``, ``consumed``) takes too: a reader sees every record consumed
/// before it, and a record is never copied into a queue on its way: one thread does all the
/// feeding, so a queue for whichever thread found the passes free would only add a copy, a
/// destroy and two lock operations per record.
package final class RecordFeed: Sendable {
    private struct Sinks {
        var verdicts: VerdictStream
        var notes = SummaryNotes.Builder()
    }

    private let sinks: Mutex<Sinks>

    /// Live passes of every verdict over `context` (``VerdictStream``), and the notes.
    package init(context: VerdictContext) {
        sinks = Mutex(Sinks(verdicts: VerdictStream(context: context)))
    }

    /// Feeds `record` to the passes and the notes (callers from several threads are served one
    /// at a time, each thread's records in its own order).
    package func consume(_ record: RunRecord) {
        sinks.withLock { s in
            s.verdicts.consume(record)
            s.notes.consume(record)
        }
    }

    /// The summary notes from every record consumed so far.
    package func notes() -> [String] {
        sinks.withLock { $0.notes.notes() }
    }

    /// Judges what the passes still hold and returns every verdict (call once, at the end).
    package func finish() -> VerdictsReport {
        sinks.withLock { $0.verdicts.finish() }
    }

    /// Records consumed by the passes so far.
    package var consumed: Int { sinks.withLock { $0.verdicts.consumed } }
}

extension RecordFeed: RecordConsumer {
    /// Feeds the records the verdicts and notes read (attempts, calls, deferred matches, ledger
    /// rows); the rest are the aggregates' business.
    func consume(_ record: RecorderRecord) {
        switch record {
        case .attempt(let attempt, _): consume(RunRecord.attempt(attempt))
        case .call(let call): consume(RunRecord.call(call))
        case .attribution(let attribution): consume(RunRecord.attribution(attribution))
        case .ledger(let entry): consume(RunRecord.ledger(entry))
        default: break
        }
    }
}
