import Foundation
import SoakRecords
import SoakVerdicts

/// Where a record sits in a run's stream, as ``Verdicts/timeOrdered(attempts:calls:attribution:)``
/// orders it: by time (an attempt's end; a call's end, or its last attempt's end if later),
/// attempts before calls at equal times, then by shard and by row within the shard's file.
struct StreamKey: Comparable {
    var time: Double
    /// 0 = attempt, 1 = call.
    var kind: Int
    var shard: Int
    var index: Int

    static func < (a: StreamKey, b: StreamKey) -> Bool {
        (a.time, a.kind, a.shard, a.index) < (b.time, b.kind, b.shard, b.index)
    }
}

/// A shard's rows arrived further out of time order than the reorder window allows (a call
/// closed long after its last attempt ended, e.g. a session check-in closed at its launch's end).
struct StreamOrderViolation: Error {
    var path: String
    var row: Int
    /// Seconds the row's time lies before the record already handed on.
    var lag: Double
}

/// A binary min-heap (the package has no collections dependency).
struct MinHeap<Element> {
    private var items: [Element] = []
    private let less: (Element, Element) -> Bool

    init(by less: @escaping (Element, Element) -> Bool) { self.less = less }

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }
    var first: Element? { items.first }

    mutating func push(_ element: Element) {
        items.append(element)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(items[child], items[parent]) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Element? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count, less(items[left], items[smallest]) { smallest = left }
            if right < items.count, less(items[right], items[smallest]) { smallest = right }
            if smallest == parent { break }
            items.swapAt(parent, smallest)
            parent = smallest
        }
        return top
    }
}

/// One shard's `attempts.csv` and `calls.csv` read back as one time-ordered stream of
/// ``RunRecord``s, without loading the files: rows are read a chunk at a time and held in a
/// reorder buffer until no row still to come can be earlier than `window` seconds before the
/// latest row read (the recorder writes each row when its attempt or call ends, so the files
/// are nearly in order). A row that turns out earlier than one already handed on throws
/// ``StreamOrderViolation``; the caller then sorts in memory instead.
///
/// Times move by `shift` seconds (a shard whose second 0 came `shift` s after the merge's).
/// Attempt rows with non-finite times or an attempt number below 1 are dropped and counted
/// in ``ignoredAttempts``, as ``Verdicts/evaluate(_:)`` does.
struct ShardRecordStream {
    private struct Pending {
        var key: StreamKey
        var record: RunRecord
    }

    private var attempts: CSVRecordReader<AttemptRecord>?
    private var calls: CSVRecordReader<CallRecord>?
    private let attemptsPath: String
    private let callsPath: String
    private let shift: Double
    private let position: Int
    private let window: Double
    private var attemptRow = 0
    private var callRow = 0
    private var attemptsFrontier = -Double.infinity
    private var callsFrontier = -Double.infinity
    private var heap = MinHeap<Pending> { $0.key < $1.key }
    /// The latest end of each call's attempts read so far, until the call's row is read.
    private var lastEnd: [CallKey: Double] = [:]
    private var lastEmitted: StreamKey?
    private(set) var ignoredAttempts = 0
    /// Most rows held in the reorder buffer at once (a measure of how far from order the files were).
    private(set) var peakBuffered = 0

    /// Opens `directory/attempts.csv` and `directory/calls.csv`.
    /// - Throws: ``ReportIOError`` when either cannot be read or has the wrong header.
    init(directory: URL, position: Int, shift: Double = 0, window: Double = 10) throws {
        let attemptsURL = directory.appendingPathComponent("attempts.csv")
        let callsURL = directory.appendingPathComponent("calls.csv")
        attemptsPath = attemptsURL.path
        callsPath = callsURL.path
        attempts = try CSVRecordReader.attempts(attemptsURL)
        calls = try CSVRecordReader.calls(callsURL)
        self.position = position
        self.shift = shift
        self.window = window
    }

    /// The next record in time order with its key, or `nil` when both files are done.
    /// - Throws: ``ReportIOError`` for an unreadable or malformed row, ``StreamOrderViolation``
    ///   when a row comes later than the window allows.
    mutating func next() throws -> (key: StreamKey, record: RunRecord)? {
        while true {
            let horizon = Swift.min(
                attempts == nil ? .infinity : attemptsFrontier, calls == nil ? .infinity : callsFrontier)
            if let top = heap.first, attempts == nil && calls == nil || top.key.time <= horizon - window {
                _ = heap.pop()
                lastEmitted = top.key
                return (top.key, top.record)
            }
            if attempts == nil && calls == nil { return nil }
            if attempts != nil && (calls == nil || attemptsFrontier <= callsFrontier) {
                try readAttempt()
            } else {
                try readCall()
            }
        }
    }

    private mutating func readAttempt() throws {
        guard var reader = attempts else { return }
        let next = try reader.next()
        attempts = reader
        guard var attempt = next else {
            attempts = nil
            return
        }
        attemptRow += 1
        guard attempt.actualStart.isFinite, attempt.end.isFinite, attempt.intendedStart.isFinite, attempt.attempt >= 1
        else {
            ignoredAttempts += 1
            return
        }
        if shift != 0 {
            attempt.intendedStart += shift
            attempt.actualStart += shift
            attempt.end += shift
        }
        attemptsFrontier = Swift.max(attemptsFrontier, attempt.end)
        let key = CallKey(attempt)
        lastEnd[key] = Swift.max(lastEnd[key] ?? -.infinity, attempt.end)
        try push(
            StreamKey(time: attempt.end, kind: 0, shard: position, index: attemptRow - 1), .attempt(attempt),
            attemptsPath, attemptRow)
    }

    private mutating func readCall() throws {
        guard var reader = calls else { return }
        let next = try reader.next()
        calls = reader
        guard var call = next else {
            calls = nil
            return
        }
        callRow += 1
        if shift != 0 {
            call.intendedStart += shift
            call.start += shift
            call.end += shift
        }
        let key = CallKey(call)
        let time = Swift.max(call.end.isFinite ? call.end : -.infinity, lastEnd.removeValue(forKey: key) ?? -.infinity)
        if time.isFinite { callsFrontier = Swift.max(callsFrontier, time) }
        try push(StreamKey(time: time, kind: 1, shard: position, index: callRow - 1), .call(call), callsPath, callRow)
    }

    private mutating func push(_ key: StreamKey, _ record: RunRecord, _ path: String, _ row: Int) throws {
        if let lastEmitted, key < lastEmitted {
            throw StreamOrderViolation(path: path, row: row + 1, lag: lastEmitted.time - key.time)
        }
        heap.push(Pending(key: key, record: record))
        peakBuffered = Swift.max(peakBuffered, heap.count)
    }
}

/// What the verdicts, the notes and the HTML report need from the merged records, gathered
/// as they stream past once.
final class MergedRecordTap {
    var notes = SummaryNotes.Builder()
    /// Every attempt, for the HTML report's per-attempt charts, while there are at most `attemptLimit`.
    var attempts: [AttemptRecord]? = []
    let attemptLimit: Int
    var ignoredAttempts = 0
    var error: (any Error)?
    /// The merged report's CSVs, written as the records pass (`nil`: not written).
    let files: MergedRecordFiles?

    init(attemptLimit: Int, files: MergedRecordFiles? = nil) {
        self.attemptLimit = attemptLimit
        self.files = files
    }

    func see(_ record: RunRecord) {
        notes.consume(record)
        files?.write(record)
        if case .attempt(let attempt) = record, attempts != nil {
            if (attempts?.count ?? 0) >= attemptLimit {
                attempts = nil
            } else {
                attempts?.append(attempt)
            }
        }
    }
}

/// The shards' records merged into one time-ordered stream (a k-way merge of each shard's
/// ``ShardRecordStream``), attribution records first. Iterating it once feeds every verdict
/// pass; a read error or an out-of-order shard ends the stream early and is left in the tap.
struct MergedRecordSequence: Sequence, IteratorProtocol {
    private var streams: [ShardRecordStream]
    private var heads = MinHeap<(key: StreamKey, record: RunRecord, stream: Int)> { $0.key < $1.key }
    private var attribution: [AttributionRecord]
    private let tap: MergedRecordTap
    private var started = false

    init(streams: [ShardRecordStream], attribution: [AttributionRecord], tap: MergedRecordTap) {
        self.streams = streams
        self.attribution = attribution.reversed()
        self.tap = tap
    }

    mutating func next() -> RunRecord? {
        if let record = attribution.popLast() { return .attribution(record) }
        guard tap.error == nil else { return nil }
        do {
            if !started {
                started = true
                for index in streams.indices { try pull(index) }
            }
            guard let head = heads.pop() else {
                tap.ignoredAttempts = streams.reduce(0) { $0 + $1.ignoredAttempts }
                return nil
            }
            try pull(head.stream)
            tap.see(head.record)
            return head.record
        } catch {
            tap.error = error
            return nil
        }
    }

    private mutating func pull(_ index: Int) throws {
        if let (key, record) = try streams[index].next() { heads.push((key, record, index)) }
    }
}
