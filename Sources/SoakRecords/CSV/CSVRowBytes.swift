/// CSV rows written straight into a byte buffer: the same bytes as ``CSV/row(_:)`` of the same
/// fields, without a `[String]` of fields, a joined `String` and its UTF-8 copy per row (the
/// recorder writes one `attempts.csv` row per attempt and one `calls.csv` row per call).
extension CSV {
    /// Appends `field` as ``escape(_:)`` writes it (quoted, quotes doubled, when it holds a
    /// delimiter, a quote or a line break).
    package static func appendField(_ field: String, to out: inout [UInt8]) {
        guard needsQuotes(field) else {
            // One copy from the string's contiguous storage when it has one (native strings do).
            let copied: Void? = field.utf8.withContiguousStorageIfAvailable { out.append(contentsOf: $0) }
            if copied == nil { out.append(contentsOf: field.utf8) }
            return
        }
        out.append(UInt8(ascii: "\""))
        for byte in field.utf8 {
            if byte == UInt8(ascii: "\"") { out.append(byte) }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether `field` holds `,`, `"`, CR or LF (ASCII bytes never occur inside a multi-byte UTF-8 sequence).
    static func needsQuotes(_ field: String) -> Bool {
        func special(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: ",") || byte == UInt8(ascii: "\"") || byte == 0x0A || byte == 0x0D
        }
        // Over the string's contiguous storage when it has one: far cheaper than iterating `utf8` by index.
        if let found = field.utf8.withContiguousStorageIfAvailable({ $0.contains(where: special) }) { return found }
        return field.utf8.contains(where: special)
    }

    /// Appends the decimal digits of `value` (`-` first when negative).
    package static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        appendDecimal(UInt64(value.magnitude), to: &out)
    }

    package static func appendDecimal(_ value: UInt64, to out: inout [UInt8]) {
        var divisor: UInt64 = 1
        while value / divisor >= 10 { divisor *= 10 }  // 10^19 at most: still a UInt64
        var rest = value
        while true {
            out.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            if divisor == 1 { return }
            divisor /= 10
        }
    }

    /// Appends what `formatSeconds(value)` returns: seconds with six decimals.
    package static func appendSeconds(_ value: Double, to out: inout [UInt8]) {
        guard value.isFinite else {
            out.append(contentsOf: "0.000000".utf8)
            return
        }
        guard abs(value) < 9e12 else {  // beyond what an Int64 of microseconds holds, as `formatSeconds`
            out.append(contentsOf: formatSeconds(value).utf8)
            return
        }
        appendMicros(Int64((value * 1e6).rounded()), to: &out)
    }

    /// Appends what `exactSeconds(value)` returns: the six-decimal form when it reads back as
    /// exactly `value`, else the shortest text that does.
    ///
    /// Whether it reads back is decided without parsing: for `|micros| < 2⁵³` both the parse of
    /// the decimal text and `Double(micros) / 1e6` are the correctly rounded value of the same
    /// rational number, so they are equal. Beyond that, `exactSeconds(_:)` parses the text back.
    package static func appendExactSeconds(_ value: Double, to out: inout [UInt8]) {
        guard value.isFinite else {
            out.append(contentsOf: (value.isNaN ? "nan" : value > 0 ? "inf" : "-inf").utf8)
            return
        }
        guard abs(value) < 9e12, case let micros = Int64((value * 1e6).rounded()), micros.magnitude < 1 << 53 else {
            out.append(contentsOf: exactSeconds(value).utf8)
            return
        }
        if Double(micros) / 1e6 == value {
            appendMicros(micros, to: &out)
        } else {
            out.append(contentsOf: "\(value)".utf8)
        }
    }

    /// `[-]seconds.micros` with six fraction digits.
    private static func appendMicros(_ micros: Int64, to out: inout [UInt8]) {
        if micros < 0 { out.append(UInt8(ascii: "-")) }
        let magnitude = micros.magnitude
        appendDecimal(UInt64(magnitude / 1_000_000), to: &out)
        out.append(UInt8(ascii: "."))
        var fraction = UInt64(magnitude % 1_000_000)
        var divisor: UInt64 = 100_000
        for _ in 0..<6 {
            out.append(UInt8(ascii: "0") + UInt8(fraction / divisor))
            fraction %= divisor
            divisor /= 10
        }
    }
}

extension CSV {
    /// The ten columns `attempts.csv` and `calls.csv` open with: device, launch, call id,
    /// endpoint, a count, the three times and the two spans, each followed by a comma.
    static func appendTimedColumns(
        device: String, launch: Int, callId: UInt64, endpoint: ContractEndpoint, count: Int, intendedStart: Double,
        start: Double, end: Double, to out: inout [UInt8]
    ) {
        let comma = UInt8(ascii: ",")
        appendField(device, to: &out)
        out.append(comma)
        appendDecimal(launch, to: &out)
        out.append(comma)
        appendDecimal(callId, to: &out)
        out.append(comma)
        appendField(endpoint.rawValue, to: &out)
        out.append(comma)
        appendDecimal(count, to: &out)
        out.append(comma)
        appendExactSeconds(intendedStart, to: &out)
        out.append(comma)
        appendExactSeconds(start, to: &out)
        out.append(comma)
        appendExactSeconds(end, to: &out)
        out.append(comma)
        appendSeconds(end - start, to: &out)
        out.append(comma)
        appendSeconds(end - intendedStart, to: &out)
        out.append(comma)
    }
}

extension AttemptRecord {
    /// Appends this record's `attempts.csv` row (with `\n`): the bytes of `CSV.row(csvFields)`.
    package func appendCSVRow(to out: inout [UInt8]) {
        let comma = UInt8(ascii: ",")
        CSV.appendTimedColumns(
            device: device, launch: launch, callId: callId, endpoint: endpoint, count: attempt,
            intendedStart: intendedStart, start: actualStart, end: end, to: &out)
        if let status { CSV.appendDecimal(status, to: &out) }
        out.append(comma)
        if let errorKind { CSV.appendField(errorKind.rawValue, to: &out) }
        out.append(comma)
        if let retryAfterSeconds { CSV.appendDecimal(retryAfterSeconds, to: &out) }
        out.append(comma)
        CSV.appendDecimal(requestBytes, to: &out)
        out.append(comma)
        CSV.appendDecimal(responseBytes, to: &out)
        out.append(comma)
        if let correlationId { CSV.appendField(correlationId, to: &out) }
        out.append(comma)
        if let clientIP { CSV.appendField(clientIP, to: &out) }
        out.append(comma)
        if let tls { CSV.appendSeconds(tls, to: &out) }
        out.append(UInt8(ascii: "\n"))
    }
}

extension CallRecord {
    /// Appends this record's `calls.csv` row (with `\n`): the bytes of `CSV.row(csvFields)`.
    package func appendCSVRow(to out: inout [UInt8]) {
        let comma = UInt8(ascii: ",")
        CSV.appendTimedColumns(
            device: device, launch: launch, callId: callId, endpoint: endpoint, count: attempts,
            intendedStart: intendedStart, start: start, end: end, to: &out)
        CSV.appendField(outcome.rawValue, to: &out)
        out.append(comma)
        if let finalStatus { CSV.appendDecimal(finalStatus, to: &out) }
        out.append(comma)
        if let correlationId { CSV.appendField(correlationId, to: &out) }
        out.append(comma)
        if let deviceId { CSV.appendField(deviceId, to: &out) }
        out.append(UInt8(ascii: "\n"))
    }
}
