import Foundation

/// Reads an RFC 4180 CSV file one row at a time, in 64 KB chunks, so a long run's CSV is never
/// held in memory whole (quoted fields may contain `,`, `"`, CR and LF; CR outside quotes is
/// dropped, as ``CSV/parse(_:)`` does).
package struct CSVRowReader {
    private let handle: FileHandle
    private let chunkSize: Int
    private var buffer: [UInt8] = []
    private var position = 0
    private var atEnd = false
    /// Rows returned so far (1 = the header).
    package private(set) var rowNumber = 0
    package let url: URL

    /// Opens `url` for reading.
    /// - Throws: ``ReportIOError`` naming the file when it cannot be opened.
    package init(url: URL, chunkSize: Int = 64 * 1024) throws {
        self.url = url
        self.chunkSize = Swift.max(1, chunkSize)
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw ReportIOError(path: url.path, reason: "cannot read it (\(error.localizedDescription))")
        }
    }

    /// Closes the file (also done when the reader is released).
    package func close() { try? handle.close() }

    /// The next byte, refilling the buffer from the file as needed; `nil` at the end.
    private mutating func nextByte() throws -> UInt8? {
        if position == buffer.count {
            guard !atEnd else { return nil }
            let data: Data?
            do {
                data = try handle.read(upToCount: chunkSize)
            } catch {
                throw ReportIOError(path: url.path, reason: "cannot read it (\(error.localizedDescription))")
            }
            guard let data, !data.isEmpty else {
                atEnd = true
                return nil
            }
            buffer = [UInt8](data)
            position = 0
        }
        defer { position += 1 }
        return buffer[position]
    }

    private mutating func peekByte() throws -> UInt8? {
        guard let byte = try nextByte() else { return nil }
        position -= 1
        return byte
    }

    /// The next row's fields, or `nil` at the end of the file.
    /// - Throws: ``ReportIOError`` when the file cannot be read.
    package mutating func next() throws -> [String]? {
        var row: [String] = []
        var field: [UInt8] = []
        var quoted = false
        var sawAny = false
        while let byte = try nextByte() {
            sawAny = true
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if try peekByte() == UInt8(ascii: "\"") {
                        _ = try nextByte()
                        field.append(byte)
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(byte)
                }
            } else if byte == UInt8(ascii: "\"") && field.isEmpty {
                quoted = true
            } else if byte == UInt8(ascii: ",") {
                row.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
            } else if byte == UInt8(ascii: "\n") {
                row.append(String(decoding: field, as: UTF8.self))
                rowNumber += 1
                return row
            } else if byte != UInt8(ascii: "\r") {
                field.append(byte)
            }
        }
        guard sawAny else { return nil }
        row.append(String(decoding: field, as: UTF8.self))
        rowNumber += 1
        return row
    }
}

/// Streams the records of one CSV written by ``CSVStreamWriter`` (`attempts.csv`, `calls.csv`):
/// checks the header, then parses one row per ``next()``.
package struct CSVRecordReader<Record> {
    private var rows: CSVRowReader
    private let parse: ([String]) -> Record?

    /// Opens `url` and checks its first row against `header`.
    /// - Throws: ``ReportIOError`` when the file cannot be read or its header differs.
    package init(url: URL, header: [String], parse: @escaping ([String]) -> Record?) throws {
        rows = try CSVRowReader(url: url)
        self.parse = parse
        guard let first = try rows.next(), first == header else {
            rows.close()
            throw ReportIOError(path: url.path, reason: "unexpected header (not written by this version?)")
        }
    }

    /// The next record, or `nil` at the end.
    /// - Throws: ``ReportIOError`` naming the file and row (1 = the header) when a row is malformed.
    package mutating func next() throws -> Record? {
        guard let row = try rows.next() else {
            rows.close()
            return nil
        }
        guard let record = parse(row) else {
            rows.close()
            throw ReportIOError(path: rows.url.path, reason: "row \(rows.rowNumber) is malformed: \(row.prefix(4))…")
        }
        return record
    }
}

extension CSVRecordReader where Record == AttemptRecord {
    /// A reader of `attempts.csv`.
    package static func attempts(_ url: URL) throws -> Self {
        try Self(url: url, header: AttemptRecord.csvHeader, parse: AttemptRecord.init(csvFields:))
    }
}

extension CSVRecordReader where Record == CallRecord {
    /// A reader of `calls.csv`.
    package static func calls(_ url: URL) throws -> Self {
        try Self(url: url, header: CallRecord.csvHeader, parse: CallRecord.init(csvFields:))
    }
}
