/// An event correlation id (`<runId>:<device>:<seq>`) as 16 bytes of integers, so the
/// reconciliation pass keeps no string per call or per ledger row.
///
/// The run id and the device are numbered in order of first sight by a ``CorrelationKeys``
/// table (a run has one run id and at most its population of devices); a sequence that is a
/// canonical decimal (`0`, `17`, not `017` or `+1`) is kept as its value, any other text gets a
/// negative number from the same table. Two ids give equal keys exactly when their texts are
/// equal: the split at the last two colons is one-to-one (see ``CorrelationId``).
package struct CorrelationKey: Hashable {
    package var run: Int32
    package var device: Int32
    package var sequence: Int64
}

/// Numbers the parts of correlation ids for ``CorrelationKey``; one table per pass.
package struct CorrelationKeys {
    private var runs: [String: Int32] = [:]
    private var devices: [String: Int32] = [:]
    /// Sequences that are not canonical decimals (never seen from the soak tester itself).
    private var oddSequences: [String: Int64] = [:]

    package init() {}

    /// The key of `text`, or `nil` when it is not a correlation id (fewer than two colons).
    package mutating func key(_ text: String) -> CorrelationKey? {
        guard let parsed = CorrelationId(text) else { return nil }
        return key(parsed)
    }

    /// The key of an id already split.
    package mutating func key(_ id: CorrelationId) -> CorrelationKey {
        let run = Self.number(id.runId, in: &runs)
        let device = Self.number(id.device, in: &devices)
        let sequence: Int64
        if let value = Self.canonicalDecimal(id.sequence) {
            sequence = value
        } else if let known = oddSequences[String(id.sequence)] {
            sequence = known
        } else {
            sequence = -Int64(oddSequences.count) - 1
            oddSequences[String(id.sequence)] = sequence
        }
        return CorrelationKey(run: run, device: device, sequence: sequence)
    }

    /// The value of `text` when it is a canonical decimal (`0`, `17`; not `017`, `+1`, `-1`, empty or
    /// beyond `Int64.max`), read from its UTF-8 without a string round trip.
    static func canonicalDecimal(_ text: Substring) -> Int64? {
        let utf8 = text.utf8
        guard let first = utf8.first, first != UInt8(ascii: "0") || utf8.count == 1 else { return nil }
        var value: Int64 = 0
        for byte in utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { return nil }
            value = sum
        }
        return value
    }

    /// Short run ids and device names (≤ 15 UTF-8 bytes) are stored inline by `String`, so the
    /// lookup copy allocates nothing.
    private static func number(_ text: Substring, in table: inout [String: Int32]) -> Int32 {
        let key = String(text)
        if let known = table[key] { return known }
        let next = Int32(truncatingIfNeeded: table.count)
        table[key] = next
        return next
    }
}
