import Synchronization

/// The live verdict passes and the summary notes of a run, fed one record at a time from every
/// thread that records, without making any of them wait while the passes work.
///
/// A record joins a queue under a short lock; whichever thread then finds the passes free
/// feeds them everything queued, in queue order, while the others go back to their requests
/// (flat combining). So the passes see exactly the order records were queued in, as with one
/// lock around them, and no request thread blocks behind a pass at work. A record queued while
/// another thread was feeding is fed by that thread or by the next one that records; every
/// reader (``notes()``, ``finish()``) feeds what is queued first. Nothing is lost: a record
/// waits in the queue until some thread feeds it.
final class RecordFeed: Sendable {
    private struct Sinks {
        var verdicts: VerdictStream
        var notes = SummaryNotes.Builder()
    }

    private let queued = Mutex<[RunRecord]>([])
    private let sinks: Mutex<Sinks>

    /// Live passes of every verdict over `context` (``VerdictStream``), and the notes.
    init(context: VerdictContext) {
        sinks = Mutex(Sinks(verdicts: VerdictStream(context: context)))
    }

    /// Queues `record` and feeds the queue if no other thread is feeding it.
    func consume(_ record: RunRecord) {
        queued.withLock { $0.append(record) }
        drainIfFree()
    }

    /// The summary notes from every record consumed so far.
    func notes() -> [String] {
        sinks.withLock { s in
            drain(into: &s)
            return s.notes.notes()
        }
    }

    /// Judges what the passes still hold and returns every verdict (call once, at the end).
    func finish() -> VerdictsReport {
        sinks.withLock { s in
            drain(into: &s)
            return s.verdicts.finish()
        }
    }

    /// Records consumed by the passes so far (queued ones not included).
    var consumed: Int { sinks.withLock { $0.verdicts.consumed } }

    /// Feeds the queue while the passes are free and it is not empty. A thread that finds them
    /// busy leaves its record to the thread feeding: that one looks at the queue again after it
    /// lets go of the passes, so no record is left behind while others are recording.
    /// A feeding thread takes at most `maxBatches` batches per record of its own, so it gets back
    /// to its request; what others queue meanwhile is fed by the next record or reader.
    private func drainIfFree(maxBatches: Int = 8) {
        var batches = 0
        while batches < maxBatches, queued.withLock({ !$0.isEmpty }) {
            guard let fed = sinks.withLockIfAvailable({ drain(into: &$0, maxBatches: maxBatches - batches) }) else {
                return
            }
            batches += max(1, fed)
        }
    }

    /// Feeds queued records to the passes and the notes, in queue order, batch by batch until the
    /// queue is empty or `maxBatches` were fed (`sinks` held); returns the batches fed.
    @discardableResult
    private func drain(into s: inout Sinks, maxBatches: Int = .max) -> Int {
        var batch: [RunRecord] = []
        var fed = 0
        while fed < maxBatches {
            queued.withLock { swap(&$0, &batch) }
            if batch.isEmpty { return fed }
            fed += 1
            for record in batch {
                s.verdicts.consume(record)
                s.notes.consume(record)
            }
            batch.removeAll(keepingCapacity: true)
        }
        return fed
    }
}
