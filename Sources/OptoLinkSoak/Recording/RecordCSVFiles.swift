import Foundation
import SoakRecords

/// Writes the recorder's attempt and call records to `attempts.csv` and `calls.csv`, one row each.
struct RecordCSVFiles: RecordConsumer {
    let attempts: CSVStreamWriter
    let calls: CSVStreamWriter

    /// Creates `attempts.csv` and `calls.csv` in `directory`.
    /// - Throws: when the files cannot be created.
    init(directory: URL) throws {
        attempts = try CSVStreamWriter(
            url: directory.appendingPathComponent("attempts.csv"), header: AttemptRecord.csvHeader)
        calls = try CSVStreamWriter(url: directory.appendingPathComponent("calls.csv"), header: CallRecord.csvHeader)
    }

    func consume(_ record: RecorderRecord) {
        switch record {
        case .attempt(let attempt, _): attempts.appendRow(attempt.appendCSVRow(to:))
        case .call(let call): calls.appendRow(call.appendCSVRow(to:))
        default: break
        }
    }

    /// Flushes and closes both files.
    func close() {
        attempts.close()
        calls.close()
    }
}
