import SoakRecords

/// The calls sleeping out a 429's `Retry-After: N` right now: a call's 429 with `N` starts its
/// wait (until the attempt's end + N seconds); its next attempt or its call record ends it.
/// Once the wait is over the retry is in flight, so it no longer counts.
struct RetryAfterWaits {
    /// Per call, the run second its wait ends.
    private var until: [CallKey: Double] = [:]

    mutating func consume(_ record: RecorderRecord) {
        switch record {
        case .attempt(let attempt, _):
            let key = CallKey(attempt)
            if attempt.status == 429, let n = attempt.retryAfterSeconds {
                until[key] = attempt.end + Double(n)
            } else {
                until.removeValue(forKey: key)
            }
        case .call(let call): until.removeValue(forKey: CallKey(call))
        default: break
        }
    }

    /// Calls whose wait is still running at run second `now`.
    func waiting(at now: Double) -> Int {
        until.values.reduce(0) { $0 + ($1 > now ? 1 : 0) }
    }
}
