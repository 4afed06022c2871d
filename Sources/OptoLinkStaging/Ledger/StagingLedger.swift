import Foundation
import SoakSupport
import Synchronization

/// The record of every accepted write (docs/CONTRACT.md §4, "Ledger"), in arrival order.
///
/// In memory by default. After ``streamToFile(_:)`` every entry goes to a JSON-lines file
/// instead (one ``StagingLedgerEntry`` object per line) and only a sparse index of byte offsets
/// stays in memory (one offset per ``indexStride`` entries), so a day-long run does not grow
/// the emulator: pages are read back from the file.
package final class StagingLedger: Sendable {
    /// Entries per offset kept in the sparse index of a file-backed ledger.
    static let indexStride = 1024
    /// Buffered bytes that trigger a write to the file.
    static let flushBytes = 64 * 1024

    private struct FileSink {
        var url: URL
        var handle: FileHandle
        var buffer: [UInt8] = []
        /// Bytes already written to the file (the offset of the buffer's first byte).
        var written: UInt64 = 0
        /// `index[i]`: byte offset of entry `i * indexStride + 1`.
        var index: [UInt64] = []
        var failure: String?
    }

    private struct State {
        var entries: [StagingLedgerEntry] = []
        var nextSequence = 1
        var file: FileSink?
    }

    private let state = Mutex(State())
    /// The observer sits in a struct, never as the bare function type of the `Mutex`: a function
    /// value passed `inout` through the generic `withLock` is re-abstracted on the way in and on
    /// the write-back, so every read wrapped it in two more thunks. After some 30,000 appends a
    /// call went that many frames deep and overflowed the stack (a one-hour soak died at 5 min).
    private struct Observer: Sendable {
        let body: @Sendable (StagingLedgerEntry) -> Void
    }

    private let observer = Mutex<Observer?>(nil)
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// An empty ledger held in memory until ``streamToFile(_:)`` names a file.
    package init() {}

    /// Appends one write and returns its sequence number.
    @discardableResult
    package func append(
        arrivedAt: Double, endpoint: StagingEndpoint, deviceId: String, apiKey: String, eventName: String? = nil,
        externalId: String? = nil, properties: [String: String]? = nil, faultAfterCommit: String? = nil
    ) -> Int {
        let entry = state.withLock { state in
            let entry = StagingLedgerEntry(
                sequence: state.nextSequence, arrivedAt: arrivedAt, endpoint: endpoint.rawValue, deviceId: deviceId,
                apiKeySuffix: SecretRedaction.shownSuffix(of: apiKey), eventName: eventName, externalId: externalId,
                properties: properties, faultAfterCommit: faultAfterCommit)
            state.nextSequence += 1
            if state.file != nil {
                Self.write(entry, to: &state.file!, encoder: encoder)
            } else {
                state.entries.append(entry)
            }
            return entry
        }
        observer.withLock { $0 }?.body(entry)
        return entry.sequence
    }

    /// Calls `body` with every entry from now on, right after it is stored (outside the lock).
    package func observe(_ body: @escaping @Sendable (StagingLedgerEntry) -> Void) {
        observer.withLock { $0 = Observer(body: body) }
    }

    /// Sends the ledger to a JSON-lines file at `url` from now on (created or truncated); entries
    /// already held are written first and dropped from memory.
    /// - Throws: when the file cannot be created.
    package func streamToFile(_ url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path])
        }
        let handle = try FileHandle(forWritingTo: url)
        state.withLock { state in
            if let old = state.file { Self.close(old) }
            var sink = FileSink(url: url, handle: handle)
            for entry in state.entries { Self.write(entry, to: &sink, encoder: encoder) }
            state.entries.removeAll()
            state.file = sink
        }
    }

    /// The JSON-lines file the ledger streams to, if any.
    var fileURL: URL? { state.withLock { $0.file?.url } }

    /// Why writing the ledger file failed, if it did (entries after the failure are lost).
    var fileFailure: String? { state.withLock { $0.file?.failure } }

    /// Writes buffered lines to the file.
    func flush() { state.withLock { state in if state.file != nil { Self.flush(&state.file!) } } }

    /// Every entry (read back from the file when file-backed: O(entries) memory for the caller).
    func entries() -> [StagingLedgerEntry] { entries(since: 0, limit: .max) }

    /// Entries with a sequence above `since`, at most `limit` of them (sequences are contiguous from 1).
    func entries(since: Int, limit: Int) -> [StagingLedgerEntry] {
        let located: (URL, UInt64, Int)? = state.withLock { state in
            guard state.file != nil else { return nil }
            Self.flush(&state.file!)
            let file = state.file!
            let first = min(max(since, 0), Int.max - 1) + 1  // the first sequence wanted
            let slot = min((first - 1) / Self.indexStride, file.index.count - 1)
            guard slot >= 0 else { return (file.url, file.written, 0) }
            return (file.url, file.index[slot], slot * Self.indexStride)
        }
        guard let (url, offset, before) = located else {
            return state.withLock { state in
                let start = min(max(since, 0), state.entries.count)
                let end = start + min(max(limit, 0), state.entries.count - start)
                return Array(state.entries[start..<end])
            }
        }
        var result: [StagingLedgerEntry] = []
        guard limit > 0, let reader = try? FileHandle(forReadingFrom: url) else { return result }
        defer { try? reader.close() }
        try? reader.seek(toOffset: offset)
        var pending: [UInt8] = []
        var sequence = before
        let decoder = JSONDecoder()
        while result.count < limit, let chunk = try? reader.read(upToCount: 1 << 20), !chunk.isEmpty {
            pending += chunk
            var lineStart = 0
            for index in pending.indices where pending[index] == UInt8(ascii: "\n") {
                defer { lineStart = index + 1 }
                sequence += 1
                guard sequence > since, result.count < limit else { continue }
                if let entry = try? decoder.decode(StagingLedgerEntry.self, from: Data(pending[lineStart..<index])) {
                    result.append(entry)
                }
            }
            pending.removeFirst(lineStart)
        }
        return result
    }

    var count: Int { state.withLock { $0.nextSequence - 1 } }

    /// Entries held in memory (0 when file-backed).
    var inMemory: Int { state.withLock { $0.entries.count } }

    /// Forgets every entry (a file-backed ledger is truncated and keeps streaming).
    func reset() {
        state.withLock { state in
            state.entries.removeAll()
            state.nextSequence = 1
            guard var file = state.file else { return }
            file.buffer.removeAll()
            file.index.removeAll()
            file.written = 0
            do {
                try file.handle.truncate(atOffset: 0)
            } catch {
                file.failure = "cannot truncate \(file.url.path): \(error.localizedDescription)"
            }
            state.file = file
        }
    }

    private static func write(_ entry: StagingLedgerEntry, to sink: inout FileSink, encoder: JSONEncoder) {
        if (entry.sequence - 1) % indexStride == 0 { sink.index.append(sink.written + UInt64(sink.buffer.count)) }
        guard let data = try? encoder.encode(entry) else { return }
        sink.buffer += data
        sink.buffer.append(UInt8(ascii: "\n"))
        if sink.buffer.count >= flushBytes { flush(&sink) }
    }

    private static func flush(_ sink: inout FileSink) {
        guard !sink.buffer.isEmpty else { return }
        do {
            try sink.handle.write(contentsOf: sink.buffer)
            sink.written += UInt64(sink.buffer.count)
        } catch {
            sink.failure = sink.failure ?? "cannot write \(sink.url.path): \(error.localizedDescription)"
        }
        sink.buffer.removeAll(keepingCapacity: true)
    }

    private static func close(_ sink: FileSink) {
        var sink = sink
        flush(&sink)
        try? sink.handle.close()
    }
}
