import Foundation
import OptoLinkStaging
import SoakSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The backend a run drives: the embedded staging emulator or a real staging URL.
package protocol SoakBackend: Sendable {
    /// Where the SDK instances send requests.
    var baseURL: URL { get }
    /// `embedded` or `remote`.
    var kind: String { get }
    /// The server's ledger of accepted writes, when available.
    func ledger() async throws -> [LedgerRow]?
    /// The server's request counters, verbatim, when available.
    func counters() async -> JSONValue?
    /// Releases the backend (stops an embedded server).
    func stop() async
    /// Tells the backend the run's second 0 (seconds since 1970): the embedded emulator counts its
    /// outage windows from it. A remote backend cannot be told; it does nothing.
    func runStarted(atEpoch epoch: Double)
    /// Follows the ledger live: streams it to `file` (JSON lines) instead of memory and hands
    /// every entry to `sink` as the server stores it. Returns `false` when the backend cannot
    /// (a remote one: its ledger is read at the end, see ``readLedger(_:)``).
    /// - Throws: when `file` cannot be created.
    func followLedger(file: URL, sink: @escaping @Sendable (LedgerRow) -> Void) throws -> Bool
    /// Hands every ledger entry to `body` in file order without holding them all; returns how
    /// many, or `nil` when the backend has no ledger.
    /// - Throws: ``SoakProfileError`` when the ledger cannot be read.
    func readLedger(_ body: (LedgerRow) -> Void) async throws -> Int?
    /// What an in-process emulator holds right now; `nil` for a remote backend.
    @Sendable func retained() -> EmulatorRetained?
    /// Whether the run can have a ledger at all, live or at its end. When it cannot (a remote
    /// backend without `--ledger`), reconciliation is not available and the live verdicts skip
    /// its pass instead of keeping every event call for rows that never come.
    var mayHaveLedger: Bool { get }
}

extension SoakBackend {
    package func runStarted(atEpoch epoch: Double) {}

    @Sendable package func retained() -> EmulatorRetained? { nil }

    package var mayHaveLedger: Bool { true }

    package func followLedger(file: URL, sink: @escaping @Sendable (LedgerRow) -> Void) throws -> Bool {
        false
    }

    package func readLedger(_ body: (LedgerRow) -> Void) async throws -> Int? {
        guard let entries = try await ledger() else { return nil }
        entries.forEach(body)
        return entries.count
    }
}

/// A real staging backend at a URL; its ledger comes from `--ledger FILE` if given.
package struct RemoteBackend: SoakBackend {
    package let baseURL: URL
    package let ledgerFile: URL?
    package var kind: String { "remote" }
    package var mayHaveLedger: Bool { ledgerFile != nil }

    package init(baseURL: URL, ledgerFile: URL?) {
        self.baseURL = baseURL
        self.ledgerFile = ledgerFile
    }

    /// - Throws: ``SoakProfileError`` when the ledger file is unreadable or malformed.
    package func ledger() async throws -> [LedgerRow]? {
        guard let ledgerFile else { return nil }
        return try Self.readLedger(ledgerFile)
    }

    package func counters() async -> JSONValue? { nil }
    package func stop() async {}

    /// Streams a `--ledger` file: JSON lines are read line by line; a JSON array is decoded whole.
    package func readLedger(_ body: (LedgerRow) -> Void) async throws -> Int? {
        guard let ledgerFile else { return nil }
        if Self.holdsNothingYet(ledgerFile) { return 0 }
        if let problem = PathProblem.readingFile(ledgerFile.path, as: "ledger") {
            throw SoakProfileError(message: "--ledger \(problem)")
        }
        guard try Self.isJSONLines(ledgerFile) else {
            let entries = try Self.readLedger(ledgerFile)
            entries.forEach(body)
            return entries.count
        }
        return try LedgerLines.read(ledgerFile, label: "--ledger", body)
    }

    /// Whether `url` is a readable regular file of 0 bytes: a ledger the backend has not written a
    /// row to yet (JSON lines with no line), read as empty; reconciliation then says how little it covers.
    static func holdsNothingYet(_ url: URL) -> Bool {
        guard PathProblem.kind(at: url.path) == "a regular file", FileManager.default.isReadableFile(atPath: url.path)
        else { return false }
        return (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) == 0
    }

    /// Whether the file's first non-blank byte (after a UTF-8 byte order mark, if any) opens an
    /// object (JSON lines) rather than an array.
    static func isJSONLines(_ url: URL) throws -> Bool {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var head = try handle.read(upToCount: 4096) ?? Data()
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { head = head.dropFirst(3) }
        return head.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == UInt8(ascii: "{")
    }

    /// Reads a `--ledger` file whole: a JSON array of `LedgerRow`, or JSON lines.
    /// - Throws: ``SoakProfileError`` naming the file and the problem.
    package static func readLedger(_ url: URL) throws -> [LedgerRow] {
        if holdsNothingYet(url) { return [] }
        if let problem = PathProblem.readingFile(url.path, as: "ledger") {
            throw SoakProfileError(message: "--ledger \(problem)")
        }
        if (try? isJSONLines(url)) == true {
            var entries: [LedgerRow] = []
            _ = try LedgerLines.read(url, label: "--ledger") { entries.append($0) }
            return entries
        }
        do {
            return try JSONDecoder().decode([LedgerRow].self, from: Data(contentsOf: url))
        } catch let error as DecodingError {
            throw SoakProfileError(message: "--ledger \(url.lastPathComponent): \(error.readableDescription)")
        } catch {
            throw SoakProfileError(message: "--ledger \(url.path): cannot read (\(error.localizedDescription))")
        }
    }
}
