import Foundation
import SoakReports
import Testing

/// Reports are written atomically: a reader sees the old file or the new one, never a part.
@Suite("Atomic report files")
struct AtomicFileTests {
    @Test("atomic JSON writes leave no temporary file behind")
    func atomic() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("atomic-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("summary.json")
        try AtomicFile.writeJSON(["a": 1], to: url)
        try AtomicFile.writeJSON(["a": 2], to: url)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["summary.json"])
        #expect(try JSONDecoder().decode([String: Int].self, from: Data(contentsOf: url)) == ["a": 2])
    }

    /// A failed atomic write leaves no temporary file behind.
    @Test func aFailedAtomicWriteLeavesNoTemporaryFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("atomic-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // The destination is a non-empty directory: the rename fails after the write.
        let target = directory.appendingPathComponent("out.json")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: target.appendingPathComponent("inside"))
        #expect(throws: (any Error).self) { try AtomicFile.write(Data("{}".utf8), to: target) }
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".tmp") }
        #expect(left.isEmpty, "\(left)")
    }
}
