import Foundation
import SoakRecords
import SoakReports

/// A merged report's `ledger.jsonl`: the ledger its reconciliation ran against (`merge --ledger
/// FILE`, or the emulator `run --processes` hosted), one ``LedgerRow`` JSON object per line in
/// the wire format the emulator writes, so the report can be merged or reconciled again.
enum MergedLedgerFile {
    static let name = "ledger.jsonl"

    /// Writes `rows` to `directory/ledger.jsonl` atomically (the rows are in memory already:
    /// the reconciliation holds them).
    /// - Throws: when a row cannot be encoded or the file cannot be written.
    static func write(_ rows: [LedgerRow], to directory: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = Data()
        for row in rows {
            data.append(try encoder.encode(row))
            data.append(0x0A)
        }
        try AtomicFile.write(data, to: directory.appendingPathComponent(name))
    }
}
