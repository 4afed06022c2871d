import Foundation

/// Seconds with microsecond resolution, as every time column in the CSVs is written.
/// (Integer arithmetic: `String(format:)` costs microseconds per call on Linux, and a run
/// formats several of these per attempt.)
package func formatSeconds(_ value: Double) -> String {
    guard value.isFinite else { return "0.000000" }
    guard abs(value) < 9e12 else { return String(value) }  // beyond what an Int64 of microseconds holds
    let micros = Int64((value * 1e6).rounded())
    let magnitude = micros.magnitude
    let fraction = String(magnitude % 1_000_000)
    return (micros < 0 ? "-" : "") + String(magnitude / 1_000_000) + "."
        + String(repeating: "0", count: 6 - fraction.count) + fraction
}

/// A time column that is read back (`intended_start`, `actual_start`, `end`, `start`): the
/// microsecond form when it reads back as exactly `value`, else the shortest text that does
/// (`12.3456789012`), so a report's rows parse back into equal records (`merge` and the
/// verdicts judge what was measured, not a rounding of it). Not-finite values are written as
/// `nan` / `inf` / `-inf`, which parse back too.
package func exactSeconds(_ value: Double) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : value > 0 ? "inf" : "-inf" }
    let micro = formatSeconds(value)
    return Double(micro) == value ? micro : "\(value)"
}

extension AttemptRecord {
    /// The `attempts.csv` header (documented in `Reports/README.md`).
    package static let csvHeader = [
        "device", "launch", "call_id", "endpoint", "attempt", "intended_start", "actual_start", "end",
        "latency", "latency_from_intended", "status", "error_kind", "retry_after_seconds", "request_bytes",
        "response_bytes", "correlation_id", "client_ip", "tls",
    ]

    /// The columns every `attempts.csv` has; `tls` (the last) came later, so a file without it
    /// still reads (``CSVRecordReader``), its records with no handshake time.
    package static let csvRequiredColumns = 17

    /// This record as one `attempts.csv` row.
    package var csvFields: [String] {
        [
            device, String(launch), String(callId), endpoint.rawValue, String(attempt), exactSeconds(intendedStart),
            exactSeconds(actualStart), exactSeconds(end), formatSeconds(end - actualStart),
            formatSeconds(end - intendedStart), status.map(String.init) ?? "", errorKind?.rawValue ?? "",
            retryAfterSeconds.map(String.init) ?? "", String(requestBytes), String(responseBytes), correlationId ?? "",
            clientIP ?? "", tls.map(formatSeconds) ?? "",
        ]
    }

    /// Parses one `attempts.csv` row (as written by ``csvFields``); `nil` when malformed.
    package init?(csvFields f: [String]) { self.init(csvRow: f) }

    /// Parses one `attempts.csv` row, as text or as bytes (``CSVRow``); `nil` when malformed.
    package init?(csvRow f: some CSVFields) {
        guard f.count == Self.csvHeader.count || f.count == Self.csvRequiredColumns,
            let launch = f.int(1), let callId = f.uint64(2),
            let endpoint = ContractEndpoint(rawValue: f.string(3)), let attempt = f.int(4),
            let intended = f.double(5), let start = f.double(6), let end = f.double(7),
            let requestBytes = f.int(13), let responseBytes = f.int(14), let status = f.optional(10, f.int),
            let errorKind = f.optional(11, { AttemptErrorKind(rawValue: f.string($0)) }),
            let retryAfter = f.optional(12, f.int),
            let tls = f.count > Self.csvRequiredColumns ? f.optional(17, f.double) : .some(nil)
        else { return nil }
        self.init(
            device: f.string(0), launch: launch, callId: callId, endpoint: endpoint, attempt: attempt,
            intendedStart: intended, actualStart: start, end: end, status: status, errorKind: errorKind,
            retryAfterSeconds: retryAfter, requestBytes: requestBytes, responseBytes: responseBytes,
            correlationId: f.nonEmptyString(15), clientIP: f.nonEmptyString(16), tls: tls
        )
    }
}

extension CallRecord {
    /// The `calls.csv` header (documented in `Reports/README.md`).
    package static let csvHeader = [
        "device", "launch", "call_id", "endpoint", "attempts", "intended_start", "start", "end", "total_time",
        "total_from_intended", "outcome", "final_status", "correlation_id", "device_id",
    ]

    /// This record as one `calls.csv` row.
    package var csvFields: [String] {
        [
            device, String(launch), String(callId), endpoint.rawValue, String(attempts), exactSeconds(intendedStart),
            exactSeconds(start), exactSeconds(end), formatSeconds(end - start), formatSeconds(end - intendedStart),
            outcome.rawValue, finalStatus.map(String.init) ?? "", correlationId ?? "", deviceId ?? "",
        ]
    }

    /// Parses one `calls.csv` row; `nil` when malformed.
    package init?(csvFields f: [String]) { self.init(csvRow: f) }

    /// Parses one `calls.csv` row, as text or as bytes (``CSVRow``); `nil` when malformed.
    package init?(csvRow f: some CSVFields) {
        guard f.count == Self.csvHeader.count, let launch = f.int(1), let callId = f.uint64(2),
            let endpoint = ContractEndpoint(rawValue: f.string(3)), let attempts = f.int(4),
            let intended = f.double(5), let start = f.double(6), let end = f.double(7),
            let outcome = CallOutcome(csv: f.string(10)), let finalStatus = f.optional(11, f.int)
        else { return nil }
        self.init(
            device: f.string(0), launch: launch, callId: callId, endpoint: endpoint, attempts: attempts,
            intendedStart: intended, start: start, end: end, outcome: outcome, finalStatus: finalStatus,
            correlationId: f.nonEmptyString(12), deviceId: f.nonEmptyString(13)
        )
    }
}

/// Reads the records back from a report directory's CSVs (the verdicts run on these).
package enum ReportCSVReader {
    /// Parses a CSV file whose first row is `header`; every other row must parse.
    ///
    /// The file is read whole and must be UTF-8: a file that is not (or starts with a byte-order
    /// mark) is handed to `String(contentsOf:encoding:)`, which refuses or decodes it, so such a
    /// file reads as any `String`-based reader would read it.
    /// - Throws: ``ReportIOError`` when the file cannot be read, its header differs, or a row is
    ///   malformed (naming the file and the row number, 1 = the header). Nothing is skipped:
    ///   verdicts over a silently shortened file would judge a run that did not happen.
    package static func read<T>(
        _ url: URL, header: [String], requiredColumns: Int? = nil, _ parse: @escaping (CSVRow) -> T?
    ) throws -> [T] {
        let bytes = try utf8Contents(of: url)
        var reader = try CSVRecordReader(
            rows: CSVRowReader(bytes: bytes, of: url), header: header, requiredColumns: requiredColumns, parse: parse)
        var records: [T] = []
        records.reserveCapacity(lineCount(bytes) - 1)
        while let record = try reader.next() { records.append(record) }
        return records
    }

    /// The bytes of `url`, when they are UTF-8 without a byte-order mark; else the UTF-8 of the
    /// text `String(contentsOf:encoding: .utf8)` makes of them.
    /// - Throws: ``ReportIOError`` when the file cannot be read (or decoded).
    static func utf8Contents(of url: URL) throws -> Data {
        if let data = try? Data(contentsOf: url), !data.starts(with: [0xEF, 0xBB, 0xBF]), isUTF8(data) {
            return data
        }
        do {
            return Data(try String(contentsOf: url, encoding: .utf8).utf8)
        } catch {
            throw ReportIOError(path: url.path, reason: "cannot read it (\(error.localizedDescription))")
        }
    }

    /// Whether `bytes` are valid UTF-8 (all ASCII, the usual case, is checked 32 bytes at a time).
    static func isUTF8(_ bytes: Data) -> Bool {
        bytes.withUnsafeBytes { raw in
            var i = 0
            while i + 32 <= raw.count {
                let words = (0..<4).reduce(0 as UInt64) {
                    $0 | raw.loadUnaligned(fromByteOffset: i + 8 * $1, as: UInt64.self)
                }
                if words & 0x8080_8080_8080_8080 != 0 { break }
                i += 32
            }
            while i < raw.count, raw[i] < 0x80 { i += 1 }
            return i == raw.count || String(validating: raw[i...], as: UTF8.self) != nil
        }
    }

    /// The number of LF bytes plus one: at least the number of rows.
    static func lineCount(_ bytes: Data) -> Int {
        bytes.withUnsafeBytes { raw in
            guard var next = raw.baseAddress else { return 1 }
            let end = next + raw.count
            var lines = 1
            while next < end, let lf = memchr(next, 0x0A, end - next) {
                lines += 1
                next = UnsafeRawPointer(lf) + 1
            }
            return lines
        }
    }

    /// Reads `attempts.csv` (as ``read(_:header:_:)`` does).
    package static func attempts(_ url: URL) throws -> [AttemptRecord] {
        try read(
            url, header: AttemptRecord.csvHeader, requiredColumns: AttemptRecord.csvRequiredColumns,
            AttemptRecord.init(csvRow:))
    }

    /// Reads `calls.csv` (as ``read(_:header:_:)`` does).
    package static func calls(_ url: URL) throws -> [CallRecord] {
        try read(url, header: CallRecord.csvHeader, CallRecord.init(csvRow:))
    }
}

/// A report file could not be written or read back; the run fails with exit code 2.
package struct ReportIOError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file concerned.
    package var path: String
    /// What went wrong, in words.
    package var reason: String

    package init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    package var description: String { "report file \(path): \(reason)" }
}
