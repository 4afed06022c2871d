import Foundation
import OptoLink

/// Seconds with microsecond resolution, as every time column in the CSVs is written.
/// (Integer arithmetic: `String(format:)` costs microseconds per call on Linux, and a run
/// formats several of these per attempt.)
func formatSeconds(_ value: Double) -> String {
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
func exactSeconds(_ value: Double) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : value > 0 ? "inf" : "-inf" }
    let micro = formatSeconds(value)
    return Double(micro) == value ? micro : "\(value)"
}

extension AttemptRecord {
    /// The `attempts.csv` header (documented in `Reports/README.md`).
    package static let csvHeader = [
        "device", "launch", "call_id", "endpoint", "attempt", "intended_start", "actual_start", "end",
        "latency", "latency_from_intended", "status", "error_kind", "retry_after_seconds", "request_bytes",
        "response_bytes", "correlation_id", "client_ip",
    ]

    /// This record as one `attempts.csv` row.
    package var csvFields: [String] {
        [
            device, String(launch), String(callId), endpoint.rawValue, String(attempt), exactSeconds(intendedStart),
            exactSeconds(actualStart), exactSeconds(end), formatSeconds(end - actualStart),
            formatSeconds(end - intendedStart), status.map(String.init) ?? "", errorKind?.rawValue ?? "",
            retryAfterSeconds.map(String.init) ?? "", String(requestBytes), String(responseBytes), correlationId ?? "",
            clientIP ?? "",
        ]
    }

    /// An empty field as `.some(nil)`, a parseable one as `.some(value)`, anything else `nil`.
    static func optional<T>(_ field: String, _ parse: (String) -> T?) -> T?? {
        if field.isEmpty { return .some(nil) }
        return parse(field).map { .some($0) }
    }

    /// Parses one `attempts.csv` row (as written by ``csvFields``); `nil` when malformed.
    package init?(csvFields f: [String]) {
        guard f.count == Self.csvHeader.count, let launch = Int(f[1]), let callId = UInt64(f[2]),
            let endpoint = OptoLinkEndpoint(rawValue: f[3]), let attempt = Int(f[4]), let intended = Double(f[5]),
            let start = Double(f[6]), let end = Double(f[7]), let requestBytes = Int(f[13]),
            let responseBytes = Int(f[14]), let status = Self.optional(f[10], Int.init),
            let errorKind = Self.optional(f[11], AttemptErrorKind.init(rawValue:)),
            let retryAfter = Self.optional(f[12], Int.init)
        else { return nil }
        self.init(
            device: f[0], launch: launch, callId: callId, endpoint: endpoint, attempt: attempt, intendedStart: intended,
            actualStart: start, end: end, status: status, errorKind: errorKind,
            retryAfterSeconds: retryAfter, requestBytes: requestBytes, responseBytes: responseBytes,
            correlationId: f[15].isEmpty ? nil : f[15], clientIP: f[16].isEmpty ? nil : f[16]
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
    package init?(csvFields f: [String]) {
        guard f.count == Self.csvHeader.count, let launch = Int(f[1]), let callId = UInt64(f[2]),
            let endpoint = OptoLinkEndpoint(rawValue: f[3]), let attempts = Int(f[4]), let intended = Double(f[5]),
            let start = Double(f[6]), let end = Double(f[7]), let outcome = CallOutcome(csv: f[10]),
            let finalStatus = AttemptRecord.optional(f[11], Int.init)
        else { return nil }
        self.init(
            device: f[0], launch: launch, callId: callId, endpoint: endpoint, attempts: attempts,
            intendedStart: intended, start: start, end: end, outcome: outcome, finalStatus: finalStatus,
            correlationId: f[12].isEmpty ? nil : f[12], deviceId: f[13].isEmpty ? nil : f[13]
        )
    }
}

/// Reads the records back from a report directory's CSVs (the verdicts run on these).
package enum ReportCSVReader {
    /// Parses a CSV file whose first row is `header`; every other row must parse.
    /// - Throws: ``ReportIOError`` when the file cannot be read, its header differs, or a row is
    ///   malformed (naming the file and the row number, 1 = the header). Nothing is skipped:
    ///   verdicts over a silently shortened file would judge a run that did not happen.
    package static func read<T>(_ url: URL, header: [String], _ parse: ([String]) -> T?) throws -> [T] {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw ReportIOError(path: url.path, reason: "cannot read it (\(error.localizedDescription))")
        }
        let rows = CSV.parse(text)
        guard let first = rows.first, first == header else {
            throw ReportIOError(path: url.path, reason: "unexpected header (not written by this version?)")
        }
        var records: [T] = []
        records.reserveCapacity(rows.count - 1)
        for (index, row) in rows.enumerated().dropFirst() {
            guard let record = parse(row) else {
                throw ReportIOError(path: url.path, reason: "row \(index + 1) is malformed: \(row.prefix(4))…")
            }
            records.append(record)
        }
        return records
    }

    package static func attempts(_ url: URL) throws -> [AttemptRecord] {
        try read(url, header: AttemptRecord.csvHeader, AttemptRecord.init(csvFields:))
    }

    package static func calls(_ url: URL) throws -> [CallRecord] {
        try read(url, header: CallRecord.csvHeader, CallRecord.init(csvFields:))
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
