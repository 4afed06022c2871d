import Foundation

/// Writes files atomically: the bytes go to a temporary file in the same directory, which
/// is then renamed over the destination, so a reader never sees a half-written file.
package enum AtomicFile {
    /// Writes `data` to `url` atomically, creating parent directories.
    /// - Throws: the underlying file-system error.
    package static func write(_ data: Data, to url: URL) throws {
        let directory = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        do {
            try data.write(to: temporary)
        } catch {
            try? FileManager.default.removeItem(at: temporary)  // a failed write leaves no partial file
            throw error
        }
        if rename(temporary.path, url.path) != 0 {
            let code = errno
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, "errno": code])
        }
    }

    /// Encodes `value` as pretty, key-sorted JSON and writes it atomically.
    package static func writeJSON<T: Encodable>(_ value: T, to url: URL) throws {
        try write(json(value), to: url)
    }

    /// `value` as pretty, key-sorted JSON ending in a line feed: every JSON file of a report.
    package static func json<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(value)
        data.append(0x0A)
        return data
    }
}
