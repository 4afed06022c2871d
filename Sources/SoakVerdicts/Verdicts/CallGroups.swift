import SoakSupport
import SoakRecords

/// The attempts of each call still open in a time-ordered stream: a call's attempts are
/// collected until its call record arrives, then handed over and forgotten.
package struct CallGroups {
    /// One call's attempts (sorted by attempt number) and its call record, when it had one.
    package struct Closed {
        var key: CallKey
        var attempts: AttemptList
        var call: CallRecord?
    }

    private var open: [CallKey: AttemptList] = [:]
    /// The latest attempt end seen so far (seconds since run start).
    private(set) var lastEnd = 0.0

    /// Takes one record; returns the call it closes, if any.
    package mutating func consume(_ record: RunRecord) -> Closed? {
        switch record {
        case .attempt(let attempt):
            let key = CallKey(attempt)
            if open.modifyValue(forKey: key, { $0.append(attempt) }) == nil { open[key] = AttemptList(attempt) }
            lastEnd = max(lastEnd, attempt.end)
            return nil
        case .call(let call):
            let key = CallKey(call)
            guard let attempts = open.removeValue(forKey: key) else { return nil }
            return Closed(key: key, attempts: attempts.sorted(), call: call)
        case .attribution, .ledger:
            return nil
        }
    }

    /// Calls whose call record never came (the run ended first, or only attempts were given), in key order.
    package mutating func drain() -> [Closed] {
        defer { open.removeAll() }
        return open.sorted { $0.key < $1.key }.map { Closed(key: $0.key, attempts: $0.value.sorted(), call: nil) }
    }
}

/// A pass that judges whole calls: each call's attempts (in attempt order) with its call record.
///
/// Inside a ``VerdictStream`` every such pass is handed the calls of one shared ``CallGroups``
/// (the stream groups its attempts once, not once per pass); fed records directly (``Verdicts/run``,
/// a pass's tests) it groups them itself in ``ownGroups``.
package protocol CallGroupPass: VerdictPass where Output: Verdict {
    /// The grouping used when the pass is fed records directly; unused inside a ``VerdictStream``.
    var ownGroups: CallGroups { get set }

    /// Takes one call once its call record came (or, at the end, one whose record never came);
    /// `streamEnd` is the latest attempt end of the stream so far, in seconds since the run's start.
    mutating func judge(_ group: CallGroups.Closed, streamEnd: Double)

    /// Judges what the pass still holds once every call was judged; `streamEnd` as above, at the end.
    mutating func finish(streamEnd: Double) -> Output
}

extension CallGroupPass {
    package mutating func consume(_ record: RunRecord) {
        if let closed = ownGroups.consume(record) { judge(closed, streamEnd: ownGroups.lastEnd) }
    }

    package mutating func finish() -> Output {
        for closed in ownGroups.drain() { judge(closed, streamEnd: ownGroups.lastEnd) }
        return finish(streamEnd: ownGroups.lastEnd)
    }
}

/// One call's attempts, the first held inline: most calls make one attempt, and a pass holds
/// every open call, so no array is allocated per call.
struct AttemptList: RandomAccessCollection {
    private var head: AttemptRecord
    private var tail: [AttemptRecord] = []

    init(_ first: AttemptRecord) { head = first }

    /// The list of `records`, which must not be empty.
    private init(records: [AttemptRecord]) {
        head = records[0]
        tail = Array(records.dropFirst())
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { 1 + tail.count }
    subscript(position: Int) -> AttemptRecord { position == 0 ? head : tail[position - 1] }

    package mutating func append(_ attempt: AttemptRecord) { tail.append(attempt) }

    /// By attempt number, then start; itself when already in that order (the usual case: one
    /// attempt, or retries recorded in turn).
    package func sorted() -> AttemptList {
        func before(_ a: AttemptRecord, _ b: AttemptRecord) -> Bool {
            (a.attempt, a.actualStart) < (b.attempt, b.actualStart)
        }
        if indices.dropFirst().allSatisfy({ !before(self[$0], self[$0 - 1]) }) { return self }
        return AttemptList(records: sorted(by: before))
    }
}

/// Where an offender stands among equals: its call, then its place within the call.
package struct WorstOrder: Comparable {
    package var key: CallKey
    package var attempt: Int

    package static func < (lhs: WorstOrder, rhs: WorstOrder) -> Bool { (lhs.key, lhs.attempt) < (rhs.key, rhs.attempt) }
}

/// The `limit` worst items seen so far (largest badness first, then call order), in bounded memory.
struct WorstList<Item> {
    private var items: [(badness: Double, order: WorstOrder, item: Item)] = []
    private(set) var limit = 0

    init(limit: Int = 0) { self.limit = limit }

    package mutating func insert(_ item: Item, badness: Double, order: WorstOrder) {
        guard limit > 0 else { return }
        items.append((badness, order, item))
        if items.count > 2 * limit + 64 { trim() }
    }

    /// The kept items, worst first.
    package var sorted: [Item] {
        var copy = self
        copy.trim()
        return copy.items.map(\.item)
    }

    private mutating func trim() {
        items.sort { ($0.badness, $1.order) > ($1.badness, $0.order) }
        if items.count > limit { items.removeLast(items.count - limit) }
    }
}
