import SoakRecords

/// Explanations a run derives from its own records for the summary's `notes`: numbers that
/// look inconsistent at a glance but follow from the contract.
package enum SummaryNotes {
    /// Builds the notes from the run's attempts and calls.
    ///
    /// - Why fewer retries were judged than 429s arrived: a 429 that was the last attempt of its
    ///   call was never retried (session check-ins are never retried; other calls had spent
    ///   their retry budget, or the run ended).
    /// - Events refused with 404 (unknown deviceId) from devices whose session check-in got a
    ///   429: the session is never retried and shares its bucket with identity, so the backend
    ///   never registered those devices (docs/CONTRACT.md §2, retry matrix).
    package static func build(attempts: [AttemptRecord], calls: [CallRecord]) -> [String] {
        var builder = Builder()
        for attempt in attempts { builder.consume(.attempt(attempt)) }
        for call in calls { builder.consume(.call(call)) }
        return builder.notes()
    }

    /// The same notes built from a stream of records in any order (`merge` feeds it the
    /// shards' records as they stream past); keeps counts and device sets only.
    package struct Builder {
        private var ended: [ContractEndpoint: Int] = [:]
        private var sessionRateLimited = Set<String>()
        private var events404 = Set<String>()

        package init() {}

        package mutating func consume(_ record: RunRecord) {
            switch record {
            case .attempt(let attempt):
                if attempt.endpoint == .session && attempt.status == 429 { sessionRateLimited.insert(attempt.device) }
                if attempt.endpoint == .events && attempt.status == 404 { events404.insert(attempt.device) }
            case .call(let call):
                if call.finalStatus == 429 { ended[call.endpoint, default: 0] += 1 }
            case .attribution, .ledger:
                break
            }
        }

        package func notes() -> [String] {
            var notes: [String] = []
            let total = ended.values.reduce(0, +)
            if total > 0 {
                let session = ended[.session] ?? 0
                var parts: [String] = []
                if session > 0 { parts.append("\(session) session (never retried)") }
                let others = ended.filter { $0.key != .session }.sorted { $0.key.rawValue < $1.key.rawValue }
                if !others.isEmpty {
                    parts.append(
                        others.map { "\($0.value) \($0.key.rawValue)" }.joined(separator: ", ")
                            + " (retry budget spent, or the run ended)")
                }
                notes.append("\(total) 429s ended their call without a retry: " + parts.joined(separator: "; "))
            }
            let both = events404.intersection(sessionRateLimited)
            if !both.isEmpty {
                notes.append(
                    "\(both.count) of \(events404.count) devices whose events got 404 (unknown deviceId) had their "
                        + "session check-in rate limited (429): the session is never retried and shares its bucket "
                        + "with identity, so the backend never registered them")
            }
            return notes
        }
    }
}
