import Foundation
import SoakRecords
import SoakVerdicts

/// A merged report's `attempts.csv` and `calls.csv`: every shard's rows, moved onto the merge's
/// clock, written in the order the merge streams them (time order, as ``ShardRecordStream``
/// and ``MergedRecordSequence`` put them), so the files are written as they are read and the
/// merge's memory stays that of its reorder buffers, however long the run.
///
/// Each file is written as `<name>.partial` and renamed on ``close()`` (``CSVStreamWriter``);
/// a pass that starts again (a wider reorder window) writes the files again from the top.
final class MergedRecordFiles {
    private let files: RecordCSVFiles

    /// Creates both files (header rows) in `directory`.
    /// - Throws: when a file cannot be created.
    init(directory: URL) throws { files = try RecordCSVFiles(directory: directory) }

    /// Appends `record`'s row to its file (attribution records have none).
    func write(_ record: RunRecord) {
        switch record {
        case .attempt(let attempt): files.attempts.appendRow(attempt.appendCSVRow(to:))
        case .call(let call): files.calls.appendRow(call.appendCSVRow(to:))
        default: break
        }
    }

    /// Flushes and renames both files; returns what could not be written (empty when all was).
    func close() -> [String] {
        files.close()
        return [files.attempts, files.calls].compactMap { writer in writer.failure.map { "\(writer.url.path): \($0)" } }
    }
}
