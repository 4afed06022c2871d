import Foundation
import Synchronization

/// Streams CSV rows to a file as a run goes, buffered, so an interrupted run keeps every
/// row it measured up to the last flush (at most `flushBytes` behind, and flushed on close).
///
/// The file is written under a `.partial` name and renamed to its final name on ``close()``,
/// so a complete file never looks partial; an interrupted run's ``close()`` still renames it.
/// Thread-safe: rows from any task are serialised by a `Mutex`.
package final class CSVStreamWriter: Sendable {
    private struct State {
        var handle: FileHandle?
        var buffer: [UInt8] = []
        var rows = 0
        var failure: String?
    }

    package let url: URL
    private let partialURL: URL
    private let flushBytes: Int
    private let state: Mutex<State>

    /// Creates the file (and its directory) and writes the header row.
    /// - Throws: the file-system error when the file cannot be created.
    package init(url: URL, header: [String], flushBytes: Int = 64 * 1024) throws {
        self.url = url
        self.partialURL = url.appendingPathExtension("partial")
        self.flushBytes = flushBytes
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: partialURL.path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: partialURL.path])
        }
        let handle = try FileHandle(forWritingTo: partialURL)
        var initial = State(handle: handle)
        initial.buffer.append(contentsOf: Array(CSV.row(header).utf8))
        state = Mutex(initial)
    }

    /// Number of data rows written so far (header excluded).
    package var rowCount: Int { state.withLock { $0.rows } }

    /// The first write error, if any (later rows are dropped after one).
    package var failure: String? { state.withLock { $0.failure } }

    /// Appends one row (fields are escaped as needed).
    package func append(_ fields: [String]) {
        appendRow { buffer in
            for (index, field) in fields.enumerated() {
                if index > 0 { buffer.append(UInt8(ascii: ",")) }
                CSV.appendField(field, to: &buffer)
            }
            buffer.append(UInt8(ascii: "\n"))
        }
    }

    /// Appends one row that `encode` writes into the buffer: a whole line, escaped, ending in `\n`
    /// (e.g. ``AttemptRecord/appendCSVRow(to:)``). It runs under the writer's lock, so it must be short.
    package func appendRow(_ encode: (inout [UInt8]) -> Void) {
        state.withLock { s in
            guard s.handle != nil else { return }
            encode(&s.buffer)
            s.rows += 1
            if s.buffer.count >= flushBytes { Self.flush(&s) }
        }
    }

    /// Writes buffered rows to disk.
    package func flush() {
        state.withLock { Self.flush(&$0) }
    }

    /// Flushes, closes and renames the file to its final name. Safe to call twice.
    package func close() {
        state.withLock { s in
            guard let handle = s.handle else { return }
            Self.flush(&s)
            try? handle.close()
            s.handle = nil
            if rename(partialURL.path, url.path) != 0 { s.failure = s.failure ?? "cannot rename \(partialURL.path)" }
        }
    }

    private static func flush(_ s: inout State) {
        guard let handle = s.handle, !s.buffer.isEmpty else { return }
        do {
            try handle.write(contentsOf: s.buffer)
        } catch {
            s.failure = s.failure ?? "\(error)"
        }
        s.buffer.removeAll(keepingCapacity: true)
    }
}

/// RFC 4180 CSV encoding and decoding.
package enum CSV {
    /// One line (with `\n`): fields containing `,`, `"`, CR or LF are quoted, quotes doubled.
    package static func row(_ fields: [String]) -> String {
        var line = ""
        for (i, field) in fields.enumerated() {
            if i > 0 { line += "," }
            line += escape(field)
        }
        return line + "\n"
    }

    /// Quotes `field` when it contains a delimiter, a quote or a line break (every quote doubled,
    /// also one a combining mark follows).
    package static func escape(_ field: String) -> String {
        guard needsQuotes(field) else { return field }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(field.utf8.count + 4)
        appendField(field, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses a whole CSV text into rows of fields (quoted fields may span lines), with the
    /// rules of ``CSVParser``.
    package static func parse(_ text: String) -> [[String]] {
        var text = text
        return text.withUTF8 { bytes in
            var parser = CSVParser()
            var offset = 0
            var rows: [[String]] = []
            while parser.nextRow(in: bytes, at: &offset, final: true) {
                rows.append(parser.withRow(in: bytes, \.strings))
            }
            return rows
        }
    }
}
