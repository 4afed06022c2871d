import SoakRecords
/// The soak tester's judgements over one run's records (no I/O).
///
/// The expectations are re-derived from the contract (docs/CONTRACT.md §1 rate limits, §2 retry
/// matrix and back-off); nothing here calls the SDK's retry code.
package enum Verdicts {
    /// Every verdict a run reports, in report order. Adding a verdict: its file, and one line here.
    package static let registry: [any Verdict.Type] = [
        BackoffVerdict.self,
        RetryMatrixVerdict.self,
        ReconciliationVerdict.self,
        LimitOracleVerdict.self,
        AttributionVerdict.self,
    ]

    /// Evaluates every verdict over records held in memory (a single run).
    ///
    /// Attempt rows whose times are not finite (a damaged CSV) are left out and counted in
    /// ``VerdictsReport/ignoredAttempts``; nothing here traps on bad input.
    package static func evaluate(_ inputs: VerdictInputs) -> VerdictsReport {
        let attempts = inputs.attempts.filter {
            $0.actualStart.isFinite && $0.end.isFinite && $0.intendedStart.isFinite && $0.attempt >= 1
        }
        var report = evaluate(
            stream: timeOrdered(attempts: attempts, calls: inputs.calls, attribution: inputs.attribution),
            context: inputs.context)
        report.ignoredAttempts = inputs.attempts.count - attempts.count
        return report
    }

    /// Evaluates every registered verdict in one pass over `stream` (attempts and calls in time
    /// order, as ``timeOrdered(attempts:calls:attribution:)`` gives them or a reader of the CSVs).
    package static func evaluate(stream: some Sequence<RunRecord>, context: VerdictContext) -> VerdictsReport {
        var passes = VerdictStream(context: context)
        for record in stream { passes.consume(record) }
        return passes.finish()
    }

    /// Runs one verdict's pass over records held in memory (tests, and each verdict's
    /// `evaluate` convenience).
    package static func run<V: Verdict>(
        _ type: V.Type, attempts: [AttemptRecord] = [], calls: [CallRecord] = [],
        attribution: [AttributionRecord] = [], context: VerdictContext
    ) -> V {
        var pass = V.makePass(context)
        for record in timeOrdered(attempts: attempts, calls: calls, attribution: attribution) {
            pass.consume(record)
        }
        return pass.finish()
    }

    /// Puts records in stream order: attribution records first, then attempts by end time and
    /// each call right after the last attempt of its (device, launch, call id); a call with no
    /// attempts comes at its own end. Ties keep attempts before calls.
    package static func timeOrdered(
        attempts: [AttemptRecord], calls: [CallRecord], attribution: [AttributionRecord] = []
    ) -> [RunRecord] {
        // Per call key, its attempts' (start, end). A key's one row goes after all its attempts; a key
        // with several rows (a session retried, against the contract, after the recorder had closed
        // it) has each row after the last attempt that started by the row's end, as it came live.
        var spans: [CallKey: [(start: Double, end: Double)]] = [:]
        for attempt in attempts { spans[CallKey(attempt), default: []].append((attempt.actualStart, attempt.end)) }
        var rows: [CallKey: Int] = [:]
        for call in calls { rows[CallKey(call), default: 0] += 1 }
        // (time, 0 = attempt / 1 = call, original index) keeps the order stable and total.
        var keyed: [(time: Double, kind: Int, index: Int)] = []
        keyed.reserveCapacity(attempts.count + calls.count)
        for (index, attempt) in attempts.enumerated() { keyed.append((attempt.end, 0, index)) }
        for (index, call) in calls.enumerated() {
            let end = call.end.isFinite && rows[CallKey(call), default: 0] > 1 ? call.end : Double.infinity
            let lastEnd = spans[CallKey(call)]?.filter { $0.start <= end }.map(\.end).max() ?? -.infinity
            let time = max(call.end.isFinite ? call.end : -.infinity, lastEnd)
            keyed.append((time, 1, index))
        }
        keyed.sort { ($0.time, $0.kind, $0.index) < ($1.time, $1.kind, $1.index) }
        return attribution.map(RunRecord.attribution)
            + keyed.map { $0.kind == 0 ? .attempt(attempts[$0.index]) : .call(calls[$0.index]) }
    }

    /// Every metric pattern the registered verdicts can emit.
    static var metricPatterns: [MetricPattern] {
        registry.flatMap { $0.metricPatterns } + [MetricPattern("verdicts", "ignored_attempts")]
    }
}

/// Every registered verdict's pass, fed one record at a time: the one code path behind a run's
/// live verdicts (the recorder feeds it as rows are recorded), ``Verdicts/evaluate(stream:context:)``
/// and any reader that merges records by time.
///
/// The passes that judge whole calls (``CallGroupPass``) share one grouping of the stream: each
/// call's attempts are collected once, and the closed call is handed to every such pass.
///
/// Memory depends on the passes' horizon (``VerdictContext/horizonSeconds``) and the rate, not on
/// how many records went through. Not thread-safe: the owner serialises calls (the recorder
/// holds it under a mutex).
package struct VerdictStream {
    /// In registry order (the report's order).
    private var passes: [ErasedPass]
    private let recordPasses: [Int]
    private let callPasses: [Int]
    private var groups = CallGroups()
    /// Records consumed so far.
    package private(set) var consumed = 0

    package init(context: VerdictContext) {
        let passes = Verdicts.registry.map { ErasedPass($0, context: context) }
        self.passes = passes
        recordPasses = passes.indices.filter { !passes[$0].judgesCalls }
        callPasses = passes.indices.filter { passes[$0].judgesCalls }
    }

    /// Feeds one record to every pass (a call record closes its call for the passes that judge calls).
    package mutating func consume(_ record: RunRecord) {
        consumed += 1
        if !callPasses.isEmpty, let closed = groups.consume(record) {
            for index in callPasses { passes[index].judge(closed, streamEnd: groups.lastEnd) }
        }
        for index in recordPasses { passes[index].consume(record) }
    }

    /// Judges what is still open and returns every verdict (call once).
    package mutating func finish() -> VerdictsReport {
        if !callPasses.isEmpty {
            for closed in groups.drain() {
                for index in callPasses { passes[index].judge(closed, streamEnd: groups.lastEnd) }
            }
        }
        let streamEnd = groups.lastEnd
        return VerdictsReport(results: passes.map { $0.finish(streamEnd: streamEnd) })
    }
}

/// A pass of some verdict type, behind one shape so the registry can drive them together.
private struct ErasedPass {
    private let box: any PassBox

    init<V: Verdict>(_ type: V.Type, context: VerdictContext) {
        let pass = V.makePass(context)
        if let grouped = pass as? any CallGroupPass {
            box = Self.callBox(grouped)
        } else {
            box = TypedPassBox<V>(pass)
        }
    }

    private static func callBox<P: CallGroupPass>(_ pass: P) -> any PassBox { CallPassBox(pass) }

    var judgesCalls: Bool { box.judgesCalls }
    package func consume(_ record: RunRecord) { box.consume(record) }
    package func judge(_ group: CallGroups.Closed, streamEnd: Double) { box.judge(group, streamEnd: streamEnd) }
    package func finish(streamEnd: Double) -> any Verdict { box.finish(streamEnd: streamEnd) }
}

private protocol PassBox: AnyObject {
    /// Whether the pass takes closed calls (``judge(_:streamEnd:)``) rather than every record.
    var judgesCalls: Bool { get }
    func consume(_ record: RunRecord)
    func judge(_ group: CallGroups.Closed, streamEnd: Double)
    func finish(streamEnd: Double) -> any Verdict
}

/// Holds one mutable pass fed every record; used by one evaluation on one task only (never shared).
private final class TypedPassBox<V: Verdict>: PassBox {
    package var pass: V.Pass

    init(_ pass: V.Pass) { self.pass = pass }

    var judgesCalls: Bool { false }
    package func consume(_ record: RunRecord) { pass.consume(record) }
    package func judge(_ group: CallGroups.Closed, streamEnd: Double) {}
    package func finish(streamEnd: Double) -> any Verdict { pass.finish() }
}

/// Holds one pass that judges closed calls from the stream's shared grouping; used by one
/// evaluation on one task only (never shared).
private final class CallPassBox<P: CallGroupPass>: PassBox {
    package var pass: P

    init(_ pass: P) { self.pass = pass }

    var judgesCalls: Bool { true }
    package func consume(_ record: RunRecord) {}
    package func judge(_ group: CallGroups.Closed, streamEnd: Double) { pass.judge(group, streamEnd: streamEnd) }
    package func finish(streamEnd: Double) -> any Verdict { pass.finish(streamEnd: streamEnd) }
}
