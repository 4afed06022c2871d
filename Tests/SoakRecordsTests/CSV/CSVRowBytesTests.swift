import Foundation
import SoakRecords
import SoakSupport
import Testing

/// CSV rows written as bytes (the recorder's per-attempt path) equal the joined fields, and
/// `exactSeconds` is written without parsing.
@Suite("CSV rows as bytes")
struct CSVRowBytesTests {
    static let attempts = [
        AttemptRecord(
            device: "d000001", launch: 1, callId: 3, endpoint: .events, attempt: 2, intendedStart: 1.5,
            actualStart: 1.75, end: 1.8, status: 429, errorKind: nil, retryAfterSeconds: 2, requestBytes: 100,
            responseBytes: 90, correlationId: "run:d000001:1", clientIP: "10.0.0.1"),
        AttemptRecord(
            device: "d,\"quoted\"", launch: 0, callId: UInt64.max, endpoint: .match, attempt: 1,
            intendedStart: 0.1 + 0.2, actualStart: -0.000_000_4, end: .infinity, status: nil, errorKind: .timedOut,
            retryAfterSeconds: nil, requestBytes: 0, responseBytes: -1, correlationId: "a\nb\r\"c\"",
            clientIP: nil),
        AttemptRecord(
            device: "ünï", launch: 12, callId: 0, endpoint: .identityClear, attempt: 3, intendedStart: .nan,
            actualStart: 12_345.678_901_234, end: -.infinity, status: 503, errorKind: .cancelledByRun,
            retryAfterSeconds: 0, requestBytes: 7, responseBytes: 8, correlationId: nil, clientIP: "::1"),
    ]

    @Test func attemptRowsAsBytesEqualTheJoinedFields() {
        for record in Self.attempts {
            var bytes: [UInt8] = []
            record.appendCSVRow(to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == CSV.row(record.csvFields))
        }
    }

    @Test func callRowsAsBytesEqualTheJoinedFields() {
        let calls = [
            CallRecord(
                device: "d000002", launch: 2, callId: 9, endpoint: .events, attempts: 3, intendedStart: 2.000_000_1,
                start: 2.5, end: 3, outcome: .ok, finalStatus: 200, correlationId: "r:d:1", deviceId: "dev-1"),
            CallRecord(
                device: "d,3", launch: 1, callId: 1, endpoint: .session, attempts: 0, intendedStart: 1e-7,
                start: .nan, end: 1e12, outcome: .cancelledByRun, finalStatus: nil, correlationId: nil,
                deviceId: "x\"y"),
        ]
        for record in calls {
            var bytes: [UInt8] = []
            record.appendCSVRow(to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == CSV.row(record.csvFields))
        }
    }

    @Test func secondsAsBytesEqualTheStringForms() {
        var rng = SeededRandom(seed: 11)
        var values: [Double] = [
            0, -0.0, 1, -1, 0.1, 0.1 + 0.2, 1e-7, -1e-9, 0.000_000_5, 0.000_001_5, 123.456_789_5, 3_600.000_001,
            86_400 * 365, 1e9 + 0.5, 9.007e9, -12.25, .ulpOfOne, .leastNonzeroMagnitude, 1.000_000_000_1,
            // Beyond an Int64 of microseconds (a damaged row, a broken clock): written, not a trap.
            9.3e12, -9.3e12, 1e13 + 0.25, 1e300, -1e300, .greatestFiniteMagnitude,
        ]
        for _ in 0..<2_000 {
            values.append((rng.unit() - 0.2) * 4_000)  // arbitrary doubles, most not a whole microsecond
            values.append(Double(Int64(rng.unit() * 4e9)) / 1e6)  // whole microseconds
        }
        for value in values {
            var exact: [UInt8] = []
            CSV.appendExactSeconds(value, to: &exact)
            #expect(String(decoding: exact, as: UTF8.self) == exactSeconds(value), "\(value)")
            var rounded: [UInt8] = []
            CSV.appendSeconds(value, to: &rounded)
            #expect(String(decoding: rounded, as: UTF8.self) == formatSeconds(value), "\(value)")
        }
    }

    @Test func decimalsAsBytesEqualTheirDescription() {
        for value in [0, 7, 10, 99, 100, -1, -10, 1_234_567, Int.max, Int.min] {
            var bytes: [UInt8] = []
            CSV.appendDecimal(value, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == String(value))
        }
    }

    @Test func aQuoteFollowedByACombiningMarkIsDoubledToo() {
        let field = "a\"\u{301}b,c"
        #expect(CSV.escape(field) == "\"a\"\"\u{301}b,c\"")
        #expect(CSV.parse(CSV.row([field, "x"])) == [[field, "x"]])
    }

    @Test func rowsStreamedAsBytesReadBackAsTheRecords() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hot-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("attempts.csv")
        let writer = try CSVStreamWriter(url: url, header: AttemptRecord.csvHeader, flushBytes: 64)
        let record = Self.attempts[0]
        for _ in 0..<5 { writer.appendRow(record.appendCSVRow(to:)) }
        writer.append(record.csvFields)
        writer.close()
        #expect(writer.rowCount == 6)
        #expect(try ReportCSVReader.attempts(url) == Array(repeating: record, count: 6))
    }
}
