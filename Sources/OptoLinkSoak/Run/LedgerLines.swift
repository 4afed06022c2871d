import Foundation
import OptoLinkStaging
import SoakSupport

/// Reads a ledger in JSON lines (one ``LedgerRow`` object per line, the emulator's
/// `--ledger-file` format) as a stream: one line in memory at a time, plus a 1 MiB read buffer.
package enum LedgerLines {
    /// The longest line read, in bytes (64 MiB); a longer one is an error naming it.
    package static let longestLine = 64 << 20

    /// Hands each entry to `body` in file order; returns how many. Blank lines are skipped.
    /// - Throws: ``SoakProfileError`` naming `label`, the file and the line that does not decode
    ///   or is longer than `longestLine` bytes.
    package static func read(
        _ url: URL, label: String, longestLine: Int = Self.longestLine, _ body: (LedgerRow) -> Void
    ) throws -> Int {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw SoakProfileError(message: "\(label) \(url.path): cannot read (\(error.localizedDescription))")
        }
        defer { try? handle.close() }
        let decoder = JSONDecoder()
        var pending = Data()
        var line = 0
        var count = 0
        func take(_ bytes: Data) throws {
            line += 1
            guard bytes.contains(where: { ![0x20, 0x09, 0x0D].contains($0) }) else { return }
            do {
                body(try decoder.decode(LedgerRow.self, from: bytes))
                count += 1
            } catch let error as DecodingError {
                throw SoakProfileError(
                    message: "\(label) \(url.lastPathComponent) line \(line): \(error.readableDescription)")
            } catch {
                throw SoakProfileError(message: "\(label) \(url.lastPathComponent) line \(line): \(error)")
            }
        }
        while true {
            let chunk: Data
            do {
                chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            } catch {
                throw SoakProfileError(message: "\(label) \(url.path): cannot read (\(error.localizedDescription))")
            }
            if chunk.isEmpty { break }
            // Only the new bytes can hold a line end: searching the whole of a long line again after
            // every chunk made a line of n MiB cost n² (a 30 MB line took 12 s).
            let searchFrom = pending.endIndex
            pending.append(chunk)
            var start = pending.startIndex
            var from = searchFrom
            while let newline = pending[from...].firstIndex(of: 0x0A) {
                try take(pending[start..<newline])
                start = pending.index(after: newline)
                from = start
            }
            if start != pending.startIndex { pending = Data(pending[start...]) }
            if pending.count > longestLine {
                throw SoakProfileError(
                    message: "\(label) \(url.lastPathComponent) line \(line + 1): longer than \(longestLine) bytes"
                        + " (a ledger entry is a few hundred)")
            }
        }
        if !pending.isEmpty { try take(pending) }
        return count
    }
}
