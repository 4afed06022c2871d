/// An event correlation id (`<runId>:<device>:<seq>`) as 16 bytes of integers, so the
/// reconciliation pass keeps no string per call or per ledger row.
///
/// The run id and the device are numbered in order of first sight by a ``CorrelationKeys``
/// table (a run has one run id and at most its population of devices); a sequence that is a
/// canonical decimal (`0`, `17`, not `017` or `+1`) is kept as its value, any other text gets a
/// negative number from the same table. Two ids give equal keys exactly when their texts are
/// equal: the split at the last two colons is one-to-one (see ``CorrelationId``).
struct CorrelationKey: Hashable {
    var run: Int32
    var device: Int32
    var sequence: Int64
}

/// Numbers the parts of correlation ids for ``CorrelationKey``; one table per pass.
struct CorrelationKeys {
    private var runs: [String: Int32] = [:]
    private var devices: [String: Int32] = [:]
    /// Sequences that are not canonical decimals (never seen from the soak tester itself).
    private var oddSequences: [String: Int64] = [:]

    /// The key of `text`, or `nil` when it is not a correlation id (fewer than two colons).
    mutating func key(_ text: String) -> CorrelationKey? {
        guard let parsed = CorrelationId(text) else { return nil }
        return key(parsed)
    }

    /// The key of an id already split.
    mutating func key(_ id: CorrelationId) -> CorrelationKey {
        let run = Self.number(id.runId, in: &runs)
        let device = Self.number(id.device, in: &devices)
        let sequence: Int64
        if let value = Int64(id.sequence), value >= 0, String(value) == id.sequence {
            sequence = value
        } else if let known = oddSequences[id.sequence] {
            sequence = known
        } else {
            sequence = -Int64(oddSequences.count) - 1
            oddSequences[id.sequence] = sequence
        }
        return CorrelationKey(run: run, device: device, sequence: sequence)
    }

    private static func number(_ text: String, in table: inout [String: Int32]) -> Int32 {
        if let known = table[text] { return known }
        let next = Int32(truncatingIfNeeded: table.count)
        table[text] = next
        return next
    }
}
