import Foundation

/// Reads an RFC 4180 CSV file one row at a time, in 64 KB chunks, so a long run's CSV is never
/// held in memory whole (quoted fields may contain `,`, `"`, CR and LF; CR outside quotes is
/// dropped: the rules of ``CSVParser``). A row may span any number of chunks.
package struct CSVRowReader {
    private let handle: FileHandle?
    private let chunkSize: Int
    private var buffer = Data()
    private var position = 0
    private var atEnd = false
    private var parser = CSVParser()
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

    /// Reads the rows of `bytes`, the whole content of `url` (which names it in errors).
    package init(bytes: Data, of url: URL) {
        self.url = url
        handle = nil
        chunkSize = 0
        buffer = bytes
        atEnd = true
    }

    /// Closes the file (also done when the reader is released).
    package func close() { try? handle?.close() }

    /// Moves to the next row, which ``row`` then holds; `false` at the end of the file.
    /// - Throws: ``ReportIOError`` when the file cannot be read.
    package mutating func advance() throws -> Bool {
        while true {
            let found = buffer.withUnsafeBytes {
                parser.nextRow(in: $0.bindMemory(to: UInt8.self), at: &position, final: atEnd)
            }
            if found {
                rowNumber += 1
                return true
            }
            guard !atEnd, let handle else { return false }
            let data: Data?
            do {
                data = try handle.read(upToCount: chunkSize)
            } catch {
                throw ReportIOError(path: url.path, reason: "cannot read it (\(error.localizedDescription))")
            }
            buffer = data ?? Data()
            position = 0
            atEnd = buffer.isEmpty
        }
    }

    /// Calls `body` with the row the last ``advance()`` moved to.
    package func withRow<T>(_ body: (CSVRow) throws -> T) rethrows -> T {
        try buffer.withUnsafeBytes { try parser.withRow(in: $0.bindMemory(to: UInt8.self), body) }
    }

    /// The next row's fields, or `nil` at the end of the file.
    /// - Throws: ``ReportIOError`` when the file cannot be read.
    package mutating func next() throws -> [String]? {
        try advance() ? withRow(\.strings) : nil
    }
}

/// Streams the records of one CSV written by ``CSVStreamWriter`` (`attempts.csv`, `calls.csv`):
/// checks the header, then parses one row per ``next()``.
package struct CSVRecordReader<Record> {
    private var rows: CSVRowReader
    private let parse: (CSVRow) -> Record?

    /// Opens `url` and checks its first row against `header`.
    /// - Throws: ``ReportIOError`` when the file cannot be read or its header differs.
    package init(
        url: URL, header: [String], requiredColumns: Int? = nil, parse: @escaping (CSVRow) -> Record?
    ) throws {
        try self.init(rows: CSVRowReader(url: url), header: header, requiredColumns: requiredColumns, parse: parse)
    }

    /// Reads the records of `rows` (a file's rows from the start), checking its first row against `header`.
    /// With `requiredColumns`, a header of only the first `requiredColumns` or more of `header`'s
    /// columns is taken too: a file written before the later columns existed.
    /// - Throws: ``ReportIOError`` when the file cannot be read or its header differs.
    package init(
        rows: CSVRowReader, header: [String], requiredColumns: Int? = nil, parse: @escaping (CSVRow) -> Record?
    ) throws {
        self.rows = rows
        self.parse = parse
        let minimum = requiredColumns ?? header.count
        guard try self.rows.advance(),
            self.rows.withRow({ row in
                let names = row.strings
                return names.count >= minimum && names.count <= header.count && names[...] == header.prefix(names.count)
            })
        else {
            self.rows.close()
            throw ReportIOError(path: rows.url.path, reason: "unexpected header (not written by this version?)")
        }
    }

    /// The next record, or `nil` at the end.
    /// - Throws: ``ReportIOError`` naming the file and row (1 = the header) when a row is malformed.
    package mutating func next() throws -> Record? {
        guard try rows.advance() else {
            rows.close()
            return nil
        }
        guard let record = rows.withRow(parse) else {
            rows.close()
            let row = rows.withRow(\.strings)
            throw ReportIOError(path: rows.url.path, reason: "row \(rows.rowNumber) is malformed: \(row.prefix(4))…")
        }
        return record
    }
}

extension CSVRecordReader where Record == AttemptRecord {
    /// A reader of `attempts.csv`.
    package static func attempts(_ url: URL) throws -> Self {
        try Self(
            url: url, header: AttemptRecord.csvHeader, requiredColumns: AttemptRecord.csvRequiredColumns,
            parse: AttemptRecord.init(csvRow:))
    }
}

extension CSVRecordReader where Record == CallRecord {
    /// A reader of `calls.csv`.
    package static func calls(_ url: URL) throws -> Self {
        try Self(url: url, header: CallRecord.csvHeader, parse: CallRecord.init(csvRow:))
    }
}
