import Foundation

/// What a ledger file the backend may still be writing holds so far, read on from where the
/// last look stopped: its size and, for JSON lines, the latest arrival among its complete lines;
/// for a JSON array, whether it is closed (a finished export).
///
/// Only the bytes added since the last look are read, so looking often at a long ledger stays
/// cheap. A line that does not decode is skipped here; the ledger's real read reports it.
struct LedgerFileTail {
    let url: URL
    /// Bytes in the file at the last look.
    private(set) var size: UInt64 = 0
    /// The latest `arrivedAt` (seconds since the Unix epoch) among the complete lines read.
    private(set) var latestArrival: Double?
    /// Whether the file is a JSON array whose last non-blank byte is `]`.
    private(set) var closedArray = false
    private var isArray: Bool?
    private var pending = Data()

    /// The one field the tail reads of a row.
    private struct Arrival: Decodable { var arrivedAt: Double }

    init(_ url: URL) { self.url = url }

    /// Reads what was added since the last look. A file that shrank (rewritten) is read again
    /// from its start; a file that cannot be read counts as empty.
    mutating func look() {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return }
        defer { try? handle.close() }
        guard let end = try? handle.seekToEnd() else { return }
        if end < size { self = LedgerFileTail(url) }
        guard end > size, (try? handle.seek(toOffset: size)) != nil,
            let added = try? handle.read(upToCount: Int(end - size))
        else { return }
        size += UInt64(added.count)
        if isArray == nil {
            var head = pending + added
            if head.starts(with: [0xEF, 0xBB, 0xBF]) { head = head.dropFirst(3) }
            if let first = head.first(where: { !Self.isBlank($0) }) { isArray = first == UInt8(ascii: "[") }
        }
        if isArray == true {
            if let last = added.last(where: { !Self.isBlank($0) }) { closedArray = last == UInt8(ascii: "]") }
            return
        }
        pending.append(added)
        var start = pending.startIndex
        let decoder = JSONDecoder()
        while let newline = pending[start...].firstIndex(of: 0x0A) {
            if let row = try? decoder.decode(Arrival.self, from: pending[start..<newline]) {
                latestArrival = max(latestArrival ?? row.arrivedAt, row.arrivedAt)
            }
            start = pending.index(after: newline)
        }
        pending = Data(pending[start...])
        // A last row without its line end is whole once it decodes; it stays pending for the next look.
        if let row = try? decoder.decode(Arrival.self, from: pending) {
            latestArrival = max(latestArrival ?? row.arrivedAt, row.arrivedAt)
        }
    }

    /// Whether the file holds a row that arrived at or after `epoch`, or is a finished array.
    func reaches(_ epoch: Double?) -> Bool {
        if closedArray { return true }
        guard let epoch else { return true }
        return (latestArrival ?? -.infinity) >= epoch
    }

    private static func isBlank(_ byte: UInt8) -> Bool { [0x20, 0x09, 0x0A, 0x0D].contains(byte) }
}
