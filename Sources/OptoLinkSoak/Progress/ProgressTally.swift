import SoakRecords

/// The numbers of the progress line, kept from the recorder's records: attempts, 429s, errors,
/// journeys done, the attempts' latency (for its p99) and the calls waiting out a Retry-After.
struct ProgressTally: RecordConsumer {
    private(set) var requests = 0
    private(set) var status429 = 0
    private(set) var errors = 0
    private(set) var journeysDone = 0
    /// Every finished attempt's latency (cancelled ones are left out).
    private(set) var latency = LatencyHistogram()
    private(set) var waits = RetryAfterWaits()
    /// Journeys that started more than `lateThreshold` seconds after their plan.
    private(set) var lateStarts = 0
    /// The run's late threshold (the recorder's).
    let lateThreshold: Double

    init(lateThreshold: Double) { self.lateThreshold = lateThreshold }

    mutating func consume(_ record: RecorderRecord) {
        waits.consume(record)
        switch record {
        case .attempt(let attempt, _):
            let cancelled = attempt.status == nil && (attempt.errorKind?.isCancellation ?? false)
            requests += 1
            if attempt.status == 429 { status429 += 1 }
            if !cancelled && (attempt.status.map { $0 >= 500 } ?? true) { errors += 1 }
            if !cancelled { latency.record(attempt.end - attempt.actualStart) }
        case .journeyEnded: journeysDone += 1
        case .journeyStarted(_, _, let lag): if lag > lateThreshold { lateStarts += 1 }
        default: break
        }
    }

    /// Counters for the progress line at run second `now`.
    func counters(at now: Double) -> ProgressCounters {
        ProgressCounters(
            requests: requests, status429: status429, errors: errors, done: journeysDone, p99: latency.percentile(99),
            waitingOnRetryAfter: waits.waiting(at: now))
    }
}
