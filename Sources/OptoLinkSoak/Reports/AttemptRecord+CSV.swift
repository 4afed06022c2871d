import Foundation
import OptoLink

/// Seconds with microsecond resolution, as every time column in the CSVs is written.
/// (Integer arithmetic: `String(format:)` costs microseconds per call on Linux, and a run
/// formats several of these per attempt.)
func formatSeconds(_ value: Double) -> String {
    guard value.isFinite else { return "0.000000" }
    let micros = Int64((value * 1e6).rounded())
    let magnitude = micros.magnitude
    let fraction = String(magnitude % 1_000_000)
    return (micros < 0 ? "-" : "") + String(magnitude / 1_000_000) + "."
        + String(repeating: "0", count: 6 - fraction.count) + fraction
}

extension AttemptRecord {
    /// The `attempts.csv` header (documented in `Reports/README.md`).
    public static let csvHeader = [
        "device", "launch", "call_id", "endpoint", "attempt", "intended_start", "actual_start", "end",
        "latency", "latency_from_intended", "status", "error_kind", "retry_after_seconds", "request_bytes",
        "response_bytes", "correlation_id", "client_ip",
    ]

    /// This record as one `attempts.csv` row.
    public var csvFields: [String] {
        [
            device, String(launch), String(callId), endpoint.rawValue, String(attempt), formatSeconds(intendedStart),
            formatSeconds(actualStart), formatSeconds(end), formatSeconds(end - actualStart),
            formatSeconds(end - intendedStart), status.map(String.init) ?? "", errorKind ?? "",
            retryAfterSeconds.map(String.init) ?? "", String(requestBytes), String(responseBytes), correlationId ?? "",
            clientIP ?? "",
        ]
    }

    /// Parses one `attempts.csv` row (as written by ``csvFields``); `nil` when malformed.
    public init?(csvFields f: [String]) {
        guard f.count == Self.csvHeader.count, let launch = Int(f[1]), let callId = UInt64(f[2]),
            let endpoint = OptoLinkEndpoint(rawValue: f[3]), let attempt = Int(f[4]), let intended = Double(f[5]),
            let start = Double(f[6]), let end = Double(f[7]), let requestBytes = Int(f[13]),
            let responseBytes = Int(f[14])
        else { return nil }
        self.init(
            device: f[0], launch: launch, callId: callId, endpoint: endpoint, attempt: attempt, intendedStart: intended,
            actualStart: start, end: end, status: Int(f[10]), errorKind: f[11].isEmpty ? nil : f[11],
            retryAfterSeconds: Int(f[12]), requestBytes: requestBytes, responseBytes: responseBytes,
            correlationId: f[15].isEmpty ? nil : f[15], clientIP: f[16].isEmpty ? nil : f[16]
        )
    }
}

extension CallRecord {
    /// The `calls.csv` header (documented in `Reports/README.md`).
    public static let csvHeader = [
        "device", "launch", "call_id", "endpoint", "attempts", "intended_start", "start", "end", "total_time",
        "total_from_intended", "outcome", "final_status", "correlation_id",
    ]

    /// This record as one `calls.csv` row.
    public var csvFields: [String] {
        [
            device, String(launch), String(callId), endpoint.rawValue, String(attempts), formatSeconds(intendedStart),
            formatSeconds(start), formatSeconds(end), formatSeconds(end - start), formatSeconds(end - intendedStart),
            outcome, finalStatus.map(String.init) ?? "", correlationId ?? "",
        ]
    }

    /// Parses one `calls.csv` row; `nil` when malformed.
    public init?(csvFields f: [String]) {
        guard f.count == Self.csvHeader.count, let launch = Int(f[1]), let callId = UInt64(f[2]),
            let endpoint = OptoLinkEndpoint(rawValue: f[3]), let attempts = Int(f[4]), let intended = Double(f[5]),
            let start = Double(f[6]), let end = Double(f[7])
        else { return nil }
        self.init(
            device: f[0], launch: launch, callId: callId, endpoint: endpoint, attempts: attempts,
            intendedStart: intended, start: start, end: end, outcome: f[10], finalStatus: Int(f[11]),
            correlationId: f[12].isEmpty ? nil : f[12]
        )
    }
}

/// Reads the records back from a report directory's CSVs (the verdicts run on these).
public enum ReportCSVReader {
    /// Parses a CSV file whose first row is `header`, skipping malformed rows.
    /// - Throws: when the file cannot be read or its header differs.
    public static func read<T>(_ url: URL, header: [String], _ parse: ([String]) -> T?) throws -> [T] {
        let text = try String(contentsOf: url, encoding: .utf8)
        let rows = CSV.parse(text)
        guard let first = rows.first, first == header else {
            throw SoakProfileError(message: "\(url.lastPathComponent): unexpected header")
        }
        return rows.dropFirst().compactMap(parse)
    }

    public static func attempts(_ url: URL) throws -> [AttemptRecord] {
        try read(url, header: AttemptRecord.csvHeader, AttemptRecord.init(csvFields:))
    }

    public static func calls(_ url: URL) throws -> [CallRecord] {
        try read(url, header: CallRecord.csvHeader, CallRecord.init(csvFields:))
    }
}
