import Foundation
import SoakRecords
import Testing

/// The `tls` column of `attempts.csv`: the handshake seconds of an attempt that opened an
/// `https` connection, written by both row writers alike, read back, and absent from files
/// written before the column existed.
@Suite("attempts.csv tls column")
struct AttemptTLSColumnTests {
    static func record(tls: Double?) -> AttemptRecord {
        AttemptRecord(
            device: "d000001", launch: 1, callId: 3, endpoint: .events, attempt: 1, intendedStart: 1.5,
            actualStart: 1.5, end: 1.75, status: 200, errorKind: nil, retryAfterSeconds: nil, requestBytes: 120,
            responseBytes: 11, correlationId: "run:d000001:1", clientIP: "127.0.0.2", tls: tls)
    }

    @Test(arguments: [0.012345, nil])
    func bothWritersAgreeAndTheRowReadsBack(tls: Double?) throws {
        let record = Self.record(tls: tls)
        var bytes: [UInt8] = []
        record.appendCSVRow(to: &bytes)
        let fields = record.csvFields
        #expect(fields.count == AttemptRecord.csvHeader.count)
        #expect(AttemptRecord.csvHeader.last == "tls")
        #expect(fields.last == (tls == nil ? "" : "0.012345"))
        #expect(String(decoding: bytes, as: UTF8.self) == fields.joined(separator: ",") + "\n")
        #expect(AttemptRecord(csvFields: fields) == record)
    }

    @Test func aFileWithoutTheColumnStillReads() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("attempts.csv")
        let older = Array(AttemptRecord.csvHeader.dropLast())
        let row = Array(Self.record(tls: nil).csvFields.dropLast())
        try (older.joined(separator: ",") + "\n" + row.joined(separator: ",") + "\n").write(
            to: url, atomically: true, encoding: .utf8)
        #expect(try ReportCSVReader.attempts(url) == [Self.record(tls: nil)])
    }

    @Test func aHeaderMissingARequiredColumnIsRefused() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("attempts.csv")
        try (AttemptRecord.csvHeader.dropLast(2).joined(separator: ",") + "\n").write(
            to: url, atomically: true, encoding: .utf8)
        #expect(throws: ReportIOError.self) { try ReportCSVReader.attempts(url) }
    }
}
