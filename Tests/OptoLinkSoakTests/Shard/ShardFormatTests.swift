import Foundation
import OptoLink
import Testing

@testable import OptoLinkSoak
import SoakRecords
import SoakSupport

/// What a shard writes for `merge` reads back exactly: CSV rows into equal records (also
/// through the streaming reader), histograms into equal histograms, tallies into equal tallies.
@Suite("Shard formats")
struct ShardFormatTests {
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("shard-format-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Attempts whose times are not whole microseconds, strings that need quoting, every optional empty and set.
    static let attempts: [AttemptRecord] = [
        AttemptRecord(
            device: "d000001", launch: 1, callId: 1, endpoint: .match, attempt: 1, intendedStart: 0.1 + 0.2,
            actualStart: 1.000_000_123_456_7, end: 1.0 / 3.0, status: 201, errorKind: nil, retryAfterSeconds: nil,
            requestBytes: 312, responseBytes: 0, correlationId: nil, clientIP: "10.0.0.1"),
        AttemptRecord(
            device: "dev,\"quoted\"\nline", launch: 2, callId: UInt64.max, endpoint: .events, attempt: 3,
            intendedStart: 12_345.678_901_234_5, actualStart: 12_345.7, end: 1e-7, status: 429, errorKind: nil,
            retryAfterSeconds: 17, requestBytes: 0, responseBytes: 88, correlationId: "run:d,1:2", clientIP: nil),
        AttemptRecord(
            device: "d000003", launch: 1, callId: 7, endpoint: .session, attempt: 1, intendedStart: -0.000_000_5,
            actualStart: 3_600.25, end: 86_400.000_000_1, status: nil, errorKind: .cancelledByRun,
            retryAfterSeconds: nil, requestBytes: 1, responseBytes: 2, correlationId: "ü\r\n", clientIP: "::1"),
    ]

    static let calls: [CallRecord] = [
        CallRecord(
            device: "d000001", launch: 1, callId: 1, endpoint: .match, attempts: 1, intendedStart: 0.1 + 0.2,
            start: 1.000_000_123_456_7, end: 2.0 / 3.0, outcome: .ok, finalStatus: 201, correlationId: nil,
            deviceId: "6F9619FF-8B86-D011-B42D-00C04FC964FF"),
        CallRecord(
            device: "dev,\"quoted\"\nline", launch: 2, callId: UInt64.max, endpoint: .events, attempts: 3,
            intendedStart: 5, start: 5.000_000_9, end: 7.123_456_789, outcome: .unfinished, finalStatus: nil,
            correlationId: "run:d,1:2", deviceId: nil),
    ]

    @Test("attempts.csv and calls.csv rows read back into equal records (times not rounded to microseconds)")
    func csvRoundTripIsLossless() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let attemptsURL = directory.appendingPathComponent("attempts.csv")
        let callsURL = directory.appendingPathComponent("calls.csv")
        let attemptsWriter = try CSVStreamWriter(url: attemptsURL, header: AttemptRecord.csvHeader, flushBytes: 10)
        let callsWriter = try CSVStreamWriter(url: callsURL, header: CallRecord.csvHeader)
        for record in Self.attempts { attemptsWriter.append(record.csvFields) }
        for record in Self.calls { callsWriter.append(record.csvFields) }
        attemptsWriter.close()
        callsWriter.close()
        #expect(try ReportCSVReader.attempts(attemptsURL) == Self.attempts)
        #expect(try ReportCSVReader.calls(callsURL) == Self.calls)

        var reader = try CSVRecordReader.attempts(attemptsURL)
        var streamed: [AttemptRecord] = []
        while let record = try reader.next() { streamed.append(record) }
        #expect(streamed == Self.attempts)
    }

    @Test("a whole-microsecond time keeps its fixed six-decimal form")
    func microsecondTimesStayReadable() {
        #expect(exactSeconds(1.25) == "1.250000")
        #expect(exactSeconds(0.000_001) == "0.000001")
        #expect(Double(exactSeconds(1.0 / 3.0)) == 1.0 / 3.0)
        #expect(exactSeconds(.infinity) == "inf" && Double(exactSeconds(-.infinity)) == -.infinity)
    }

    @Test(
        "the streaming row reader gives the same rows as the whole-text parser at every chunk size",
        arguments: [1, 2, 3, 7, 64 * 1024])
    func streamingReaderMatchesParser(chunk: Int) throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let rows = [["a", "b,c", "\"q\"", ""], ["two\nlines", "cr\r\nlf", "ünï"], [""], ["last", "no newline"]]
        let text = rows.map(CSV.row).joined().dropLast()
        let url = directory.appendingPathComponent("rows.csv")
        try Data(text.utf8).write(to: url)
        var reader = try CSVRowReader(url: url, chunkSize: chunk)
        var read: [[String]] = []
        while let row = try reader.next() { read.append(row) }
        #expect(read == CSV.parse(String(text)))
        #expect(read == rows)
    }

    @Test("a malformed row is named by file and row number; a wrong header is refused")
    func streamingReaderErrors() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("calls.csv")
        let good = Self.calls[0].csvFields
        var bad = good
        bad[4] = "many"
        try Data((CSV.row(CallRecord.csvHeader) + CSV.row(good) + CSV.row(bad)).utf8).write(to: url)
        var reader = try CSVRecordReader.calls(url)
        #expect(try reader.next() == Self.calls[0])
        #expect {
            _ = try reader.next()
        } throws: { error in
            (error as? ReportIOError).map { $0.path == url.path && $0.reason.contains("row 3") } ?? false
        }
        #expect(throws: ReportIOError.self) { _ = try CSVRecordReader.attempts(url) }
    }

    /// Latencies from 1 µs to 20 s on a log scale, deterministic.
    static func samples(_ count: Int, seed: UInt64) -> [Double] {
        var rng = SeededRandom(seed: seed)
        return (0..<count).map { _ in 1e-6 * pow(2e7, rng.unit()) }
    }

    @Test("a histogram's serialised form decodes into an equal histogram")
    func histogramRoundTrip() throws {
        var histogram = LatencyHistogram()
        for value in Self.samples(5_000, seed: 1) + [0, 40_000] { histogram.record(value) }
        let data = try JSONEncoder().encode(histogram)
        #expect(try JSONDecoder().decode(LatencyHistogram.self, from: data) == histogram)
        #expect(
            try JSONDecoder().decode(LatencyHistogram.self, from: JSONEncoder().encode(LatencyHistogram()))
                == LatencyHistogram())
    }

    @Test("a serialised histogram whose buckets do not add up, or point outside the range, is refused")
    func histogramDecodingChecks() {
        let bad = [
            #"{"count": 3, "min": 0, "max": 1, "sum": 1, "buckets": [[5, 2]]}"#,
            #"{"count": 1, "min": 0, "max": 1, "sum": 1, "buckets": [[999999, 1]]}"#,
            #"{"count": 2, "min": 0, "max": 1, "sum": 1, "buckets": [[5, 1], [5, 1]]}"#,
        ]
        for text in bad {
            #expect(throws: DecodingError.self) {
                _ = try JSONDecoder().decode(LatencyHistogram.self, from: Data(text.utf8))
            }
        }
    }

    @Test("histograms of three shards, serialised and merged, equal the histogram of all samples")
    func histogramMergeIsExact() throws {
        let parts = (0..<3).map { Self.samples(3_000 + 500 * $0, seed: UInt64(10 + $0)) }
        var whole = LatencyHistogram()
        for value in parts.joined() { whole.record(value) }
        var merged = LatencyHistogram()
        for part in parts {
            var shard = LatencyHistogram()
            for value in part { shard.record(value) }
            merged.merge(try JSONDecoder().decode(LatencyHistogram.self, from: JSONEncoder().encode(shard)))
        }
        #expect(merged.count == whole.count && merged.min == whole.min && merged.max == whole.max)
        #expect(merged.nonEmptyBuckets.map(\.count) == whole.nonEmptyBuckets.map(\.count))
        #expect(abs(merged.sum - whole.sum) <= 1e-9 * whole.sum)
        let sorted = parts.joined().sorted()
        for p in [50.0, 90, 95, 99, 99.9] {
            #expect(merged.percentile(p) == whole.percentile(p))
            let exact = sorted[Int(NearestRank.rank(percentile: p, count: UInt64(sorted.count))) - 1]
            #expect(abs(merged.percentile(p) - exact) <= LatencyHistogram.relativePrecision * exact)
        }
    }

    @Test("a recorder tally survives JSON and adds shard by shard")
    func tallyRoundTripAndAdd() throws {
        var tally = RecorderTally(interval: 1, lateThreshold: 0.01)
        tally.attempts = 3
        tally.endpoints["match"] = RecorderTally.Endpoint(attempts: 3, byStatus: ["201": 2, "429": 1])
        tally.endpoints["match"]?.attemptLatency.record(0.012)
        tally.intervals = [
            RecorderTally.Interval(slot: 0, attempts: 2, latencySum: 0.5, latencyCount: 2, latencyMax: 0.3)
        ]
        tally.outageOpens = ["during": ["cache_on": ["cached": 2]]]
        let decoded = try JSONDecoder().decode(RecorderTally.self, from: JSONEncoder().encode(tally))
        #expect(decoded == tally)
        var sum = tally
        sum.add(decoded, slotShift: 1)
        #expect(sum.attempts == 6)
        #expect(sum.endpoints["match"]?.byStatus == ["201": 4, "429": 2])
        #expect(sum.endpoints["match"]?.attemptLatency.count == 2)
        #expect(sum.intervals.map(\.slot) == [0, 1])
        #expect(sum.outageOpens["during"]?["cache_on"]?["cached"] == 4)
    }
}
