import Foundation
import SoakRecords
import Testing

@Suite("CSV writing")
struct CSVTests {
    @Test(
        "fields with commas, quotes and line breaks are quoted and round-trip",
        arguments: [
            ["plain", "a,b", "say \"hi\"", "two\nlines", "", "cr\r\nlf", "ünï"],
            ["", "", ""],
        ])
    func roundTrip(fields: [String]) {
        let text = CSV.row(fields) + CSV.row(["x"])
        #expect(CSV.parse(text) == [fields, ["x"]])
    }

    @Test("escaping only quotes fields that need it")
    func escape() {
        #expect(CSV.escape("abc") == "abc")
        #expect(CSV.escape("a,b") == "\"a,b\"")
        #expect(CSV.escape("a\"b") == "\"a\"\"b\"")
    }

    @Test("streamed rows are on disk after close, renamed from .partial, and read back as records")
    func stream() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("csv-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("attempts.csv")
        let writer = try CSVStreamWriter(url: url, header: AttemptRecord.csvHeader, flushBytes: 64)
        let record = AttemptRecord(
            device: "d000001", launch: 1, callId: 3, endpoint: .events, attempt: 2, intendedStart: 1.5,
            actualStart: 1.75, end: 1.8, status: 429, errorKind: nil, retryAfterSeconds: 2, requestBytes: 100,
            responseBytes: 90, correlationId: "run:d000001:1", clientIP: "10.0.0.1")
        for _ in 0..<10 { writer.append(record.csvFields) }
        #expect(FileManager.default.fileExists(atPath: url.path + ".partial"))
        writer.close()
        #expect(!FileManager.default.fileExists(atPath: url.path + ".partial"))
        let back = try ReportCSVReader.attempts(url)
        #expect(back.count == 10)
        #expect(back[0] == record)
        #expect(writer.rowCount == 10)
    }
}
