import Foundation
import SoakRecords

/// The window arithmetic behind ``LimitOracleVerdict`` for one bucket, one key at a time.
struct LimitReplay {
    /// One attempt as the limiter saw it: arrival somewhere in `[start, end]`.
    struct Hit {
        var start: Double
        var end: Double
        var status: Int?
        var retryAfterSeconds: Int?
        var device: String
        var callId: UInt64
        var attempt: Int

        init(_ record: AttemptRecord) {
            start = record.actualStart
            end = max(record.end, record.actualStart)
            status = record.status
            retryAfterSeconds = record.retryAfterSeconds
            device = record.device
            callId = record.callId
            attempt = record.attempt
        }

        var isRejected: Bool { status == 429 }
        /// Passed the limiter for sure: any answer but a 429 or a 5xx.
        var isAccepted: Bool { status.map { $0 != 429 && !(500..<600).contains($0) } ?? false }
        /// No response, or a 5xx that may have come from before the limiter (a fault, a proxy).
        var isUncertain: Bool { status.map { (500..<600).contains($0) } ?? true }
    }

    /// Where a fixed-window replay of one key stands between two calls of
    /// ``fixedWindow(_:key:state:watermark:)``: what the next window carries over.
    struct FixedWindowState {
        /// When the next window opened at the earliest (`nil`: at its first hit).
        var openLow: Double?
        var moved: [Hit] = []
        var floating: [Hit] = []
        /// Whether the key's first window of the run is replayed already (only there can the
        /// server's window have opened before the run's first hit).
        var firstWindowDone = false
    }

    package let declared: DeclaredLimit
    package let tolerance: Double
    let maxExamples: Int
    package var bucket: LimitOracleVerdict.Bucket
    /// Findings kept for the report: the first ones of each key in replay order, keys in name
    /// order, at most `maxExamples` (trimmed as they come, so bounded).
    private var examples: [(key: String, sequence: Int, finding: LimitOracleVerdict.Finding)] = []
    private var exampleSequence = 0

    /// Whether the server's buckets are known to start empty (no use before the run to allow for).
    package let bucketsStartEmpty: Bool

    init(declared: DeclaredLimit, tolerance: Double, maxExamples: Int, bucketsStartEmpty: Bool = false) {
        self.bucketsStartEmpty = bucketsStartEmpty
        self.declared = declared
        self.tolerance = tolerance
        self.maxExamples = maxExamples
        bucket = LimitOracleVerdict.Bucket(declared: declared, endpoints: [])
    }

    package mutating func tally(_ hits: [Hit]) {
        for hit in hits {
            if hit.isRejected {
                bucket.rejected += 1
            } else if hit.isAccepted {
                bucket.accepted += 1
            } else {
                bucket.uncertain += 1
            }
        }
    }

    private mutating func finding(_ kind: LimitFinding, _ hit: Hit, key: String, _ detail: String) {
        guard maxExamples > 0 else { return }
        exampleSequence += 1
        examples.append(
            (
                key, exampleSequence,
                .init(
                    kind: kind, key: key, device: hit.device, callId: hit.callId, attempt: hit.attempt, at: hit.start,
                    detail: detail)
            ))
        if examples.count > 2 * maxExamples + 64 { trimExamples() }
    }

    private mutating func trimExamples() {
        examples.sort { ($0.key, $0.sequence) < ($1.key, $1.sequence) }
        if examples.count > maxExamples { examples.removeLast(examples.count - maxExamples) }
    }

    /// The bucket with its kept examples.
    mutating func finishedBucket() -> LimitOracleVerdict.Bucket {
        trimExamples()
        var result = bucket
        result.examples = examples.map(\.finding)
        return result
    }

    /// Checks a 429's `N` against the admissible seconds left in its window (`least`…`most`,
    /// seconds); counts a missing `N`.
    private mutating func checkN(_ hit: Hit, key: String, least: Double, most: Double) {
        guard let n = hit.retryAfterSeconds else {
            bucket.wrongMessage += 1
            finding(.wrongMessage, hit, key: key, "429 without a parseable 'Retry after N second(s)'")
            return
        }
        let low = max(1, Self.wholeSecondsUp(min(least, most) - tolerance))
        let high = max(low, Self.wholeSecondsUp(max(least, most) + tolerance))
        if n < low || n > high {
            bucket.wrongN += 1
            finding(.wrongN, hit, key: key, "N = \(n), expected \(low)…\(high)")
        }
    }

    /// Fixed window: windows open at the first counted hit after the previous window closed.
    ///
    /// Per window, `openLow…openHigh` bounds when it opened (hence when it closed). A hit is
    /// **clear** in the window when it certainly arrived after the previous window closed and
    /// before this one closes; hits straddling the close are **edge** hits. An edge pass after a
    /// window already full of certain passes, or after a certain 429, cannot be in that window
    /// for a correct server: it moves on and is judged in the next one. Other edge passes and
    /// uncertain hits float: they may count in any later window their interval reaches, so they
    /// excuse 429s there but never count as certain.
    package mutating func fixedWindow(_ hits: [Hit], key: String) {
        tally(hits)
        var remaining = hits
        var state = FixedWindowState()
        fixedWindow(&remaining, key: key, state: &state, watermark: .infinity)
    }

    /// Replays the windows of one key as far as the hits known so far decide them: `hits` are
    /// the key's hits not yet replayed, sorted by start, and every hit starting before
    /// `watermark` (run seconds) is among them. Replayed hits are removed from `hits`; what the
    /// next window carries over stays in `state`. With `watermark` infinite it replays to the end.
    /// Hits are tallied by the caller as they arrive.
    package mutating func fixedWindow(
        _ hits: inout [Hit], key: String, state: inout FixedWindowState, watermark: Double
    ) {
        let ttl = declared.windowSeconds
        let limit = declared.limit
        var index = 0  // next hit (in start order) certainly after the previous window closed
        var openLow = state.openLow ?? hits.first?.start ?? 0
        var moved = state.moved  // edge passes certainly in a later window than the one they straddled
        var floating = state.floating  // edge passes and uncertain hits of earlier windows, maybe counted later
        defer {
            hits.removeFirst(index)
            state.moved = moved
            state.floating = floating
        }
        while index < hits.count || !moved.isEmpty {
            // The window opened no later than its first certainly counted hit (an uncertain hit
            // may never have reached the limiter).
            var openHigh = moved.filter { !$0.isUncertain }.map(\.end).min() ?? .infinity
            var scan = index
            while scan < hits.count, hits[scan].start <= openHigh {
                if !hits[scan].isUncertain { openHigh = min(openHigh, hits[scan].end) }
                scan += 1
            }
            // Hits still to come start at or after the watermark: the window is decided only when
            // every hit that could fall in it or straddle its close is known.
            guard watermark == .infinity || openHigh + ttl + tolerance < watermark else {
                state.openLow = openLow
                return
            }
            openLow = min(openLow, openHigh)
            var closeLow = openLow + ttl
            var closeHigh = openHigh + ttl
            var (clear, edge, next) = Self.split(
                hits, from: index, moved: moved, closeLow: closeLow, closeHigh: closeHigh,
                tolerance: tolerance)
            // The key's first window: 429s whose `N` says the server's window closes clearly before
            // this one can are use of the bucket from before the run (see `priorUseClose`); the
            // window then closes when the server's does. A server known to start empty has none.
            let mayHoldPriorUse = !state.firstWindowDone && !bucketsStartEmpty
            state.firstWindowDone = true
            var priorUse = false
            if mayHoldPriorUse, let close = priorUseClose(clear, edge, closeLow: closeLow) {
                priorUse = true
                (closeLow, closeHigh) = close
                (clear, edge, next) = Self.split(
                    hits, from: index, moved: moved, closeLow: closeLow,
                    closeHigh: closeHigh, tolerance: tolerance)
            }
            floating.removeAll { $0.end + tolerance < openLow }
            bucket.windows += 1

            let passes = clear.filter(\.isAccepted)
            judgePasses(passes, key: key)
            let rejected = clear.filter(\.isRejected)
            judgeRejections(
                rejected, among: clear + edge + floating, key: key, priorUse: priorUse,
                mayHoldPriorUse: mayHoldPriorUse, close: closeLow...closeHigh)
            // An edge 429 may belong to this window or to a later one.
            for hit in edge where hit.isRejected { checkN(hit, key: key, least: 0, most: ttl) }

            // After `limit` certain passes, or after a certain 429, a correct server lets nothing
            // more through in this window: a pass at the edge then belongs to a later one.
            let full = passes.count >= limit
            let firstRejectionEnd = rejected.map(\.end).min() ?? .infinity
            moved = edge.filter { $0.isAccepted && (full || $0.start > firstRejectionEnd) }
            // An edge 429 cannot be among the first `limit` hits of a later window, and a later
            // 429 that follows it is excused by those hits anyway: only passes and uncertain hits float.
            let floats = edge.filter { !$0.isRejected && !($0.isAccepted && (full || $0.start > firstRejectionEnd)) }
            floating += floats
            bucket.ambiguous += edge.count - moved.count
            // The next window opens after this one closed, so never before `closeLow`.
            let nextStarts = (floating + moved).map(\.start) + (next < hits.count ? [hits[next].start] : [])
            openLow = max(closeLow, nextStarts.min() ?? closeLow)
            // With nothing carried over and no next hit known yet, the next window opens at the
            // first hit still to come (which starts after this one closed).
            state.openLow = nextStarts.isEmpty && watermark != .infinity ? nil : openLow
            index = next
        }
    }

    /// Every pass beyond the first `limit` of one window is too lenient.
    private mutating func judgePasses(_ passes: [Hit], key: String) {
        let limit = declared.limit
        guard passes.count > limit else { return }
        bucket.tooLenient += passes.count - limit
        for hit in passes.dropFirst(limit) {
            finding(.tooLenient, hit, key: key, "passed as hit \(passes.count) of \(limit) allowed in the window")
        }
    }

    /// Judges one window's clear 429s: too strict when fewer than `limit` hits (of any outcome:
    /// the throttler counts rejected hits too) can have reached the server before it in this
    /// window, unless use of the bucket before the run explains it; then checks each one's `N`
    /// against the window's close (somewhere in `close`).
    private mutating func judgeRejections(
        _ rejected: [Hit], among windowHits: [Hit], key: String, priorUse: Bool, mayHoldPriorUse: Bool,
        close: ClosedRange<Double>
    ) {
        let limit = declared.limit
        let starts = windowHits.map(\.start).sorted()
        for hit in rejected {
            let before = Self.count(of: starts, atOrBelow: hit.end) - 1  // all but itself
            if before < limit && priorUse {
                bucket.priorUse += 1
            } else if before < limit && mayHoldPriorUse && Self.endsBefore(hit, close.lowerBound) {
                // Its `N` ends the server's window within the tolerance before this one's
                // earliest close: maybe use from just before the run, maybe too strict.
                bucket.ambiguous += 1
                continue
            } else if before < limit {
                bucket.tooStrict += 1
                finding(.tooStrict, hit, key: key, "429 with at most \(before) of \(limit) hits before it")
            }
            checkN(hit, key: key, least: close.lowerBound - hit.end, most: close.upperBound - hit.start)
        }
    }

    /// The hits of one window from `hits[start...]` and the carried-over `moved` ones: **clear**
    /// (certainly before the close, `closeLow…closeHigh`), **edge** (straddling it), and the index
    /// of the first hit certainly after it.
    private static func split(
        _ hits: [Hit], from start: Int, moved: [Hit], closeLow: Double, closeHigh: Double, tolerance: Double
    ) -> (clear: [Hit], edge: [Hit], next: Int) {
        var clear: [Hit] = []
        var edge: [Hit] = []
        for hit in moved {
            if hit.end + tolerance <= closeLow { clear.append(hit) } else { edge.append(hit) }
        }
        var next = start
        while next < hits.count {
            let hit = hits[next]
            if hit.end + tolerance <= closeLow {
                clear.append(hit)
            } else if hit.start - tolerance >= closeHigh {
                break
            } else {
                edge.append(hit)
            }
            next += 1
        }
        return (clear, edge, next)
    }

    /// Whether a 429's `N` says the server's window (or its oldest counted hit) runs out before
    /// `bound` (run seconds): it runs out at most `N` seconds after the hit's latest arrival.
    static func endsBefore(_ hit: Hit, _ bound: Double) -> Bool {
        guard let n = hit.retryAfterSeconds else { return false }
        return hit.end + Double(n) < bound
    }

    /// Fixed window, a key's first window: the server's close (`low…high`, run seconds) when
    /// its 429s prove its window opened before the run's first hit, else `nil`.
    ///
    /// A 429 proves it when fewer than `limit` of the run's hits can precede it (otherwise it is
    /// no evidence of anything but the run's own use, and a short `N` is just wrong) and its `N`
    /// ends the server's window more than the tolerance before this window's earliest close
    /// `closeLow`. The server answers `N = ceil(seconds left)`, so its window closes in
    /// `(start + N - 1, end + N]` of each such 429; the close is where those intervals meet
    /// (the earliest 429's alone if they do not: the others are then wrong about `N`).
    private func priorUseClose(_ clear: [Hit], _ edge: [Hit], closeLow: Double) -> (Double, Double)? {
        let starts = (clear + edge).map(\.start).sorted()
        let proofs = clear.filter { hit in
            hit.isRejected && Self.endsBefore(hit, closeLow - tolerance)
                && Self.count(of: starts, atOrBelow: hit.end) - 1 < declared.limit
        }
        let intervals = proofs.sorted { $0.start < $1.start }.compactMap { hit in
            hit.retryAfterSeconds.map { (hit.start + Double($0 - 1), hit.end + Double($0)) }
        }
        guard let first = intervals.first else { return nil }
        let low = intervals.map(\.0).max() ?? first.0
        let high = intervals.map(\.1).min() ?? first.1
        return low < high ? (low, high) : first
    }

    /// `ceil(seconds)` as an integer, clamped to ±10⁹ (never traps on infinities or NaN).
    static func wholeSecondsUp(_ seconds: Double) -> Int {
        guard !seconds.isNaN else { return 0 }
        return Int(min(max(seconds.rounded(.up), -1e9), 1e9))
    }

    /// How many of the ascending `values` are `< bound` (binary search).
    package static func count(of values: [Double], below bound: Double) -> Int {
        var low = 0
        var high = values.count
        while low < high {
            let middle = (low + high) / 2
            if values[middle] < bound { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Sliding window: each hit against the passed hits in its preceding window.
    ///
    /// `possible` counts hits that may have passed (passes and uncertain hits) and may lie in the
    /// hit's window before it; `definite` counts certain passes certainly there. Both come from
    /// binary searches over sorted start and end times, so a run of n hits costs O(n log n).
    package mutating func slidingWindow(_ hits: [Hit], key: String) {
        tally(hits)
        slidingWindow(hits, key: key, runStart: hits.map(\.start).min() ?? 0) { _ in true }
    }

    /// Judges the hits at the positions `judge` picks, against every hit in `hits` (which must
    /// hold every hit that may share a window with them). `runStart` is the earliest start of
    /// the key's hits in the run (run seconds): a 429 whose `N` says the oldest hit in the
    /// server's log arrived before it is use of the bucket from before the run. Hits are
    /// tallied by the caller.
    package mutating func slidingWindow(_ hits: [Hit], key: String, runStart: Double, judge: (Int) -> Bool) {
        let ttl = declared.windowSeconds
        let limit = declared.limit
        let counted = hits.filter { !$0.isRejected }  // passed or uncertain
        let accepted = hits.filter(\.isAccepted)
        let countedStarts = counted.map(\.start).sorted()
        let countedEnds = counted.map(\.end).sorted()
        let acceptedStarts = accepted.map(\.start).sorted()
        // `definite` is a two-sided count (started inside the window, ended before the hit):
        // answered offline, hits in order of start, passes inserted in order of end into a
        // Fenwick tree indexed by their start's rank.
        let byEnd = accepted.sorted { $0.end < $1.end }
        var inserted = FenwickTree(count: acceptedStarts.count)
        var insertedCount = 0
        var definiteByHit = [Int](repeating: 0, count: hits.count)
        for position in hits.indices.sorted(by: { hits[$0].start < hits[$1].start }) {
            let hit = hits[position]
            while insertedCount < byEnd.count, byEnd[insertedCount].end < hit.start {
                inserted.add(at: Self.count(of: acceptedStarts, below: byEnd[insertedCount].start))
                insertedCount += 1
            }
            let windowOpen = hit.end - ttl + tolerance
            definiteByHit[position] =
                insertedCount - inserted.prefixSum(Self.count(of: acceptedStarts, below: windowOpen))
        }
        for (position, hit) in hits.enumerated() where judge(position) {
            let own = hit.isRejected ? 0 : 1
            // May have arrived before `hit` (or at the same instant) and after its window opened.
            let possible =
                Self.count(of: countedStarts, atOrBelow: hit.end)
                - Self.count(of: countedEnds, below: hit.start - ttl - tolerance) - own
            // Certainly arrived before `hit` and certainly inside its window.
            let definite = definiteByHit[position]
            if hit.isAccepted {
                if definite >= limit {
                    bucket.tooLenient += 1
                    finding(.tooLenient, hit, key: key, "passed with \(definite) passes already in the window")
                } else if possible >= limit {
                    bucket.ambiguous += 1
                }
            } else if hit.isRejected {
                // The oldest hit in the server's log leaves it `N` seconds after the 429 at the
                // latest, so it arrived by `end + N - ttl`; before the run's first hit, it is
                // not the run's.
                if possible < limit && !bucketsStartEmpty && Self.endsBefore(hit, runStart + ttl - tolerance) {
                    bucket.priorUse += 1
                } else if possible < limit && !bucketsStartEmpty && Self.endsBefore(hit, runStart + ttl) {
                    bucket.ambiguous += 1
                    continue
                } else if possible < limit {
                    bucket.tooStrict += 1
                    finding(.tooStrict, hit, key: key, "429 with at most \(possible) of \(limit) passes in the window")
                } else if definite < limit {
                    bucket.ambiguous += 1
                }
                checkN(hit, key: key, least: 0, most: ttl)
            }
        }
    }

    /// How many of the ascending `values` are `<= bound` (binary search).
    package static func count(of values: [Double], atOrBelow bound: Double) -> Int {
        var low = 0
        var high = values.count
        while low < high {
            let middle = (low + high) / 2
            if values[middle] <= bound { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// Counts of inserted items over ranks `0..<count`, with prefix sums in O(log n).
package struct FenwickTree {
    private var tree: [Int]

    package init(count: Int) { tree = [Int](repeating: 0, count: count + 1) }

    /// Adds one at `rank` (0-based).
    package mutating func add(at rank: Int) {
        var index = rank + 1
        while index < tree.count {
            tree[index] += 1
            index += index & -index
        }
    }

    /// How many were added at ranks `0..<rank`.
    package func prefixSum(_ rank: Int) -> Int {
        var index = min(rank, tree.count - 1)
        var sum = 0
        while index > 0 {
            sum += tree[index]
            index -= index & -index
        }
        return sum
    }
}
