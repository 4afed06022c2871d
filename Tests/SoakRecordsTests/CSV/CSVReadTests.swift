import Foundation
import Testing

import SoakRecords
import SoakSupport

/// The byte-level CSV reading (``CSVParser``, ``CSVRowReader``, ``ReportCSVReader``, ``CSVNumber``)
/// gives exactly what a plain scalar-by-scalar reading gives: the same rows for any text, hostile or
/// malformed; the same records, bit for bit; the same errors, word for word.
@Suite("CSV reading")
struct CSVReadTests {
    // MARK: - The oracle: a reading simple enough to check by eye

    /// A scalar-by-scalar CSV parser, one `Unicode.Scalar` at a time: the byte parser's oracle.
    static func scalarParse(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        var iterator = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = nil
        func next() -> Unicode.Scalar? {
            if let p = pending {
                pending = nil
                return p
            }
            return iterator.next()
        }
        var sawAny = false
        while let c = next() {
            sawAny = true
            if quoted {
                if c == "\"" {
                    if let n = next() {
                        if n == "\"" {
                            field.unicodeScalars.append("\"")
                        } else {
                            quoted = false
                            pending = n
                        }
                    } else {
                        quoted = false
                    }
                } else {
                    field.unicodeScalars.append(c)
                }
            } else if c == "\"" && field.isEmpty {
                quoted = true
            } else if c == "," {
                row.append(field)
                field = ""
            } else if c == "\n" {
                row.append(field)
                rows.append(row)
                row = []
                field = ""
                sawAny = false
            } else if c != "\r" {
                field.unicodeScalars.append(c)
            }
        }
        if sawAny || !field.isEmpty || !row.isEmpty {
            row.append(field)
            rows.append(row)
        }
        return rows
    }

    /// ``ReportCSVReader/read(_:header:_:)`` done the plain way: the whole file as a `String`, the
    /// scalar parser, then each row's `[String]` parsed (with `Int(String)`, `Double(String)`).
    static func textRead<T>(_ url: URL, header: [String], _ parse: ([String]) -> T?) -> Result<[T], ReportIOError> {
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            return .failure(ReportIOError(path: url.path, reason: "cannot read it (\(error.localizedDescription))"))
        }
        let rows = scalarParse(text)
        guard let first = rows.first, first == header else {
            return .failure(ReportIOError(path: url.path, reason: "unexpected header (not written by this version?)"))
        }
        var records: [T] = []
        for (index, row) in rows.enumerated().dropFirst() {
            guard let record = parse(row) else {
                return .failure(
                    ReportIOError(path: url.path, reason: "row \(index + 1) is malformed: \(row.prefix(4))…"))
            }
            records.append(record)
        }
        return .success(records)
    }

    static func capture<T>(_ read: () throws -> [T]) -> Result<[T], ReportIOError> {
        do {
            return .success(try read())
        } catch let error as ReportIOError {
            return .failure(error)
        } catch {
            return .failure(ReportIOError(path: "?", reason: "unexpected \(error)"))
        }
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("csv-read-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func streamedRows(_ url: URL, chunk: Int) throws -> [[String]] {
        var reader = try CSVRowReader(url: url, chunkSize: chunk)
        var rows: [[String]] = []
        while let row = try reader.next() { rows.append(row) }
        return rows
    }

    // MARK: - Rows

    /// Pieces hostile texts are made of: delimiters, quotes, both line breaks, a lone CR,
    /// non-ASCII letters, a combining mark (also right after a quote), an emoji.
    static let pieces = [
        "a", "7", ",", "\"", "\"\"", "\r", "\n", "\r\n", "é", "\u{301}", "\"\u{301}", "ü,", "🦊", " ", "x\"y",
    ]

    static func randomText(_ rng: inout SeededRandom) -> String {
        let length = Int(rng.next() % 24)
        return (0..<length).map { _ in pieces[Int(rng.next() % UInt64(pieces.count))] }.joined()
    }

    @Test("random hostile texts, well-formed or not, parse into the rows the scalar parser gave")
    func randomTextsParseAsBefore() {
        var rng = SeededRandom(seed: 4180)
        for _ in 0..<3_000 {
            let text = Self.randomText(&rng)
            #expect(CSV.parse(text) == Self.scalarParse(text), "\(text.debugDescription)")
        }
        for text in [
            "", "\n", "\r", "\"", "\"\"", "\"\"\"", "a,", ",", "\"a\"b", "\"\"\r\"x\"", "a\r\nb\r\n", "\"open,\n",
        ] {
            #expect(CSV.parse(text) == Self.scalarParse(text), "\(text.debugDescription)")
        }
    }

    @Test(
        "the streaming reader gives the same rows with a chunk boundary at every byte",
        arguments: [1, 2, 3, 5, 7, 11, 64 * 1024])
    func chunkBoundaries(chunk: Int) throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("rows.csv")
        var rng = SeededRandom(seed: UInt64(chunk))
        for _ in 0..<150 {
            let text = (0..<4).map { _ in Self.randomText(&rng) }.joined(separator: "\n")
            try Data(text.utf8).write(to: url)
            #expect(try Self.streamedRows(url, chunk: chunk) == Self.scalarParse(text), "\(text.debugDescription)")
        }
    }

    @Test("rows from bytes in memory equal rows read from the file")
    func rowsFromMemory() throws {
        let text = "h1,h2\n\"a,\"\"b\"\"\r\nc\",é\r\nlast"
        var reader = CSVRowReader(bytes: Data(text.utf8), of: URL(fileURLWithPath: "/nowhere.csv"))
        var rows: [[String]] = []
        while try reader.advance() { rows.append(reader.withRow(\.strings)) }
        #expect(rows == [["h1", "h2"], ["a,\"b\"\r\nc", "é"], ["last"]])
        #expect(reader.rowNumber == 3)
    }

    // MARK: - Numbers

    @Test("integers parsed from bytes equal Int(String) and UInt64(String)")
    func integers() {
        var inputs = [
            "", "+", "-", "0", "-0", "+0", "007", "12", "-12", "+12", " 1", "1 ", "1a", "١", "9223372036854775807",
            "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "18446744073709551615",
            "18446744073709551616", "99999999999999999999999", "1_000", "0x10", "1.0", "1e3",
        ]
        var rng = SeededRandom(seed: 64)
        let alphabet = Array("0123456789+- a")
        for _ in 0..<5_000 {
            inputs.append(String((0..<Int(rng.next() % 22)).map { _ in alphabet[Int(rng.next() % 14)] }))
        }
        for text in inputs {
            let bytes = Array(text.utf8)
            let int: Int? = bytes.withUnsafeBufferPointer { CSVNumber.integer($0) }
            let unsigned: UInt64? = bytes.withUnsafeBufferPointer { CSVNumber.integer($0) }
            #expect(int == Int(text), "\(text.debugDescription)")
            #expect(unsigned == UInt64(text), "\(text.debugDescription)")
        }
    }

    @Test("doubles parsed from bytes equal Double(String) bit for bit, and the fast path is the one taken")
    func doubles() {
        var inputs = [
            "0", "-0", "0.000000", "-0.000000", "1.250000", "12.3456789012", "nan", "inf", "-inf", "NaN",
            "infinity", "1e-07", "1E5", "+1", "1.", ".5", "-.5", "-", ".", "", " 1", "1 ", "0x1p3",
            "9007199254740992", "9007199254740993", "0.9007199254740993", "1234567890.1234567",
            "0.0000000000000000000001", "0.00000000000000000000001", "12345678901234567890", "1.2.3", "--1",
            "4.35", "0.1", "0.3", "86400.0000001", "1\u{0}5",
        ]
        var rng = SeededRandom(seed: 53)
        for _ in 0..<20_000 {
            let value = Double(bitPattern: rng.next())
            let time = (rng.unit() - 0.2) * pow(10, Double(rng.next() % 12))
            inputs += [exactSeconds(value), exactSeconds(time), formatSeconds(time), "\(time)", "\(value)"]
            var digits = rng.next() % 2 == 0 ? "-" : ""
            for _ in 0..<(1 + rng.next() % 12) { digits.append(Character(String(rng.next() % 10))) }
            digits += "."
            for _ in 0..<(1 + rng.next() % 14) { digits.append(Character(String(rng.next() % 10))) }
            inputs.append(digits)
        }
        var fast = 0
        for text in inputs {
            let bytes = Array(text.utf8)
            let parsed = bytes.withUnsafeBufferPointer { CSVNumber.double($0) }
            #expect(parsed?.bitPattern == Double(text)?.bitPattern, "\(text.debugDescription)")
            if bytes.withUnsafeBufferPointer({ CSVNumber.shortDecimal($0) }) != nil { fast += 1 }
        }
        #expect(fast > inputs.count / 4)
        #expect(Array("12.345678".utf8).withUnsafeBufferPointer { CSVNumber.shortDecimal($0) } == 12.345678)
        #expect(Array("nan".utf8).withUnsafeBufferPointer { CSVNumber.shortDecimal($0) } == nil)
    }

    // MARK: - Records

    static let hostile = [
        "", "\"", "\"\"", ",", "a,b", "say \"hi\"", "two\nlines", "cr\r\nlf", "lone\rcr", "ünï", "\"\u{301}x",
        "e\u{301}", "🦊,\"", " ", "\r", "\n", "d000001", "run:d000001:42", "10.0.0.1", "::1",
    ]

    static func pick<T>(_ values: [T], _ rng: inout SeededRandom) -> T {
        values[Int(rng.next() % UInt64(values.count))]
    }

    /// A time: whole microseconds, clock readings, not finite, tiny or large, or negative zero.
    /// (Not beyond 2⁴⁰ s: the byte writer traps on times past what an `Int64` of microseconds holds.)
    static func time(_ rng: inout SeededRandom) -> Double {
        switch rng.next() % 8 {
        case 0: return Double(Int(rng.next() % 100_000_000)) / 1e6
        case 1: return pick([.nan, .infinity, -.infinity, -0.0, 0, 1e12, -1e-300, .leastNonzeroMagnitude], &rng)
        case 2:
            let sign: FloatingPointSign = rng.next() % 2 == 0 ? .plus : .minus
            return Double(sign: sign, exponent: Int(rng.next() % 80) - 40, significand: 1 + rng.unit())
        default: return rng.unit() * 3_600 - 1
        }
    }

    static func attempt(_ rng: inout SeededRandom) -> AttemptRecord {
        let some = rng.next() % 2 == 0
        return AttemptRecord(
            device: pick(hostile, &rng), launch: pick([0, 1, 7, -3, Int.max, Int.min], &rng),
            callId: pick([0, 1, 99, UInt64.max], &rng), endpoint: pick(ContractEndpoint.allCases, &rng),
            attempt: Int(rng.next() % 5), intendedStart: time(&rng), actualStart: time(&rng), end: time(&rng),
            status: some ? pick([200, 201, 429, 503, -1], &rng) : nil,
            errorKind: some ? nil : pick(AttemptErrorKind.allCases, &rng),
            retryAfterSeconds: rng.next() % 3 == 0 ? Int(rng.next() % 120) : nil,
            requestBytes: Int(rng.next() % 4_000), responseBytes: pick([0, 88, Int.max], &rng),
            correlationId: some ? pick(hostile, &rng) : nil, clientIP: rng.next() % 3 == 0 ? nil : pick(hostile, &rng))
    }

    static func call(_ rng: inout SeededRandom) -> CallRecord {
        CallRecord(
            device: pick(hostile, &rng), launch: Int(rng.next() % 9), callId: rng.next(),
            endpoint: pick(ContractEndpoint.allCases, &rng), attempts: Int(rng.next() % 4),
            intendedStart: time(&rng), start: time(&rng), end: time(&rng), outcome: pick(CallOutcome.allCases, &rng),
            finalStatus: rng.next() % 2 == 0 ? 201 : nil,
            correlationId: rng.next() % 2 == 0 ? pick(hostile, &rng) : nil,
            deviceId: rng.next() % 2 == 0 ? pick(hostile, &rng) : nil)
    }

    /// The record's columns as written, with its times' bit patterns (so a NaN equals itself);
    /// `signedZero: false` counts -0 as 0, which the writer writes as `0.000000`.
    static func key(_ record: AttemptRecord, signedZero: Bool = true) -> [String] {
        record.csvFields + [record.intendedStart, record.actualStart, record.end].map { bits($0, signedZero) }
    }

    static func key(_ record: CallRecord, signedZero: Bool = true) -> [String] {
        record.csvFields + [record.intendedStart, record.start, record.end].map { bits($0, signedZero) }
    }

    static func bits(_ value: Double, _ signedZero: Bool) -> String {
        value == 0 && !signedZero ? "0" : "\(value.bitPattern)"
    }

    static func keys<T>(_ result: Result<[T], ReportIOError>, _ key: (T) -> [String]) -> Result<
        [[String]], ReportIOError
    > {
        result.map { $0.map(key) }
    }

    @Test("seeded random records with hostile fields read back equal, as the text reader read them, streamed too")
    func recordsRoundTrip() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var rng = SeededRandom(seed: 2_026)
        let attempts = (0..<600).map { _ in Self.attempt(&rng) }
        let calls = (0..<300).map { _ in Self.call(&rng) }
        let attemptsURL = directory.appendingPathComponent("attempts.csv")
        let callsURL = directory.appendingPathComponent("calls.csv")
        let attemptsWriter = try CSVStreamWriter(url: attemptsURL, header: AttemptRecord.csvHeader, flushBytes: 100)
        let callsWriter = try CSVStreamWriter(url: callsURL, header: CallRecord.csvHeader)
        for record in attempts { attemptsWriter.appendRow(record.appendCSVRow(to:)) }
        for record in calls { callsWriter.appendRow(record.appendCSVRow(to:)) }
        attemptsWriter.close()
        callsWriter.close()

        let attemptsRead = try ReportCSVReader.attempts(attemptsURL)
        let callsRead = try ReportCSVReader.calls(callsURL)
        #expect(
            attemptsRead.map { Self.key($0, signedZero: false) } == attempts.map { Self.key($0, signedZero: false) })
        #expect(callsRead.map { Self.key($0, signedZero: false) } == calls.map { Self.key($0, signedZero: false) })
        let before = Self.textRead(attemptsURL, header: AttemptRecord.csvHeader, AttemptRecord.init(csvFields:))
        #expect(Self.keys(before) { Self.key($0) } == .success(attemptsRead.map { Self.key($0) }))
        let callsBefore = Self.textRead(callsURL, header: CallRecord.csvHeader, CallRecord.init(csvFields:))
        #expect(Self.keys(callsBefore) { Self.key($0) } == .success(callsRead.map { Self.key($0) }))

        var reader = try CSVRecordReader.attempts(attemptsURL)
        var streamed: [AttemptRecord] = []
        while let record = try reader.next() { streamed.append(record) }
        #expect(streamed.map { Self.key($0) } == attemptsRead.map { Self.key($0) })
    }

    // MARK: - Errors

    /// Each way a row or a file can be wrong, applied to a good `calls.csv` text.
    static let corruptions: [(String, @Sendable (inout [String]) -> Void)] = [
        ("a word for a count", { $0[2] = $0[2].replacingOccurrences(of: ",events,1,", with: ",events,many,") }),
        ("a field missing", { $0[1] = String($0[1].dropLast(2)) + "\n" }),
        ("a field too many", { $0[1] = String($0[1].dropLast()) + ",extra\n" }),
        ("an empty line", { $0.insert("\n", at: 2) }),
        ("a lone CR line", { $0.insert("\r\n", at: 1) }),
        ("an unknown outcome", { $0[1] = $0[1].replacingOccurrences(of: ",ok,", with: ",exploded,") }),
        ("a status with a letter", { $0[2] = $0[2].replacingOccurrences(of: ",201,", with: ",2O1,") }),
        (
            "a time with a comma inside quotes",
            { $0[1] = $0[1].replacingOccurrences(of: ",2.250000,", with: ",\"2,25\",") }
        ),
        ("an unclosed quote", { $0[2] = "\"" + $0[2] }),
        ("a wrong header", { $0[0] = "device,launch\n" }),
        ("no rows at all", { $0 = [] }),
        ("only a header", { $0 = [$0[0]] }),
    ]

    static func callsText() -> [String] {
        let record = CallRecord(
            device: "d,1", launch: 1, callId: 2, endpoint: .events, attempts: 1, intendedStart: 1.5, start: 1.5,
            end: 2.25, outcome: .ok, finalStatus: 201, correlationId: "r:\"d\":1", deviceId: nil)
        var second = record
        second.callId = 3
        return [CSV.row(CallRecord.csvHeader), CSV.row(record.csvFields), CSV.row(second.csvFields)]
    }

    @Test("a malformed row or header is refused with the message the text reader gave, also when streamed")
    func malformedRowsKeepTheirMessage() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("calls.csv")
        for (name, corrupt) in Self.corruptions {
            var lines = Self.callsText()
            corrupt(&lines)
            try Data(lines.joined().utf8).write(to: url)
            let before = Self.keys(Self.textRead(url, header: CallRecord.csvHeader, CallRecord.init(csvFields:))) {
                Self.key($0)
            }
            let now = Self.keys(Self.capture { try ReportCSVReader.calls(url) }) { Self.key($0) }
            #expect(now == before, "\(name)")
            let streamed = Self.keys(
                Self.capture {
                    var reader = try CSVRecordReader.calls(url)
                    var records: [CallRecord] = []
                    while let record = try reader.next() { records.append(record) }
                    return records
                }
            ) { Self.key($0) }
            #expect(streamed == before, "\(name)")
            if case .success = before, name != "only a header" {
                Issue.record("\(name): the corruption did not corrupt")
            }
        }
    }

    @Test("a file that is not UTF-8, starts with a byte-order mark or is missing reads as the text reader read it")
    func encodingsAsBefore() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("calls.csv")
        let text = Array(Self.callsText().joined().utf8)
        let files: [(String, [UInt8]?)] = [
            ("invalid UTF-8 in a device", text.prefix(200) + [0xC3, 0x28] + text.dropFirst(200)),
            ("a lone continuation byte", [0x80] + text),
            ("a truncated sequence at the end", text + [0xE2, 0x82]),
            ("a byte-order mark", [0xEF, 0xBB, 0xBF] + text), ("plain", text), ("missing", nil),
        ]
        for (name, bytes) in files {
            try? FileManager.default.removeItem(at: url)
            if let bytes { try Data(bytes).write(to: url) }
            let before = Self.keys(Self.textRead(url, header: CallRecord.csvHeader, CallRecord.init(csvFields:))) {
                Self.key($0)
            }
            let now = Self.keys(Self.capture { try ReportCSVReader.calls(url) }) { Self.key($0) }
            #expect(now == before, "\(name)")
        }
    }
}
