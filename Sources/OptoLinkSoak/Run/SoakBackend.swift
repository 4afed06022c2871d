import Foundation
import OptoLinkStaging

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
    func ledger() async throws -> [StagingLedgerEntry]?
    /// The server's request counters, verbatim, when available.
    func counters() async -> JSONValue?
    /// Releases the backend (stops an embedded server).
    func stop() async
    /// Tells the backend the run's second 0 (seconds since 1970): the embedded emulator counts its
    /// outage windows from it. A remote backend cannot be told; it does nothing.
    func runStarted(atEpoch epoch: Double)
}

extension SoakBackend {
    package func runStarted(atEpoch epoch: Double) {}
}

/// A real staging backend at a URL; its ledger comes from `--ledger FILE` if given.
package struct RemoteBackend: SoakBackend {
    package let baseURL: URL
    package let ledgerFile: URL?
    package var kind: String { "remote" }

    package init(baseURL: URL, ledgerFile: URL?) {
        self.baseURL = baseURL
        self.ledgerFile = ledgerFile
    }

    /// - Throws: ``SoakProfileError`` when the ledger file is unreadable or malformed.
    package func ledger() async throws -> [StagingLedgerEntry]? {
        guard let ledgerFile else { return nil }
        return try Self.readLedger(ledgerFile)
    }

    package func counters() async -> JSONValue? { nil }
    package func stop() async {}

    /// Reads a `--ledger` file: a JSON array of `StagingLedgerEntry`.
    /// - Throws: ``SoakProfileError`` naming the file and the problem.
    package static func readLedger(_ url: URL) throws -> [StagingLedgerEntry] {
        if let problem = PathProblem.readingFile(url.path, as: "ledger") {
            throw SoakProfileError(message: "--ledger \(problem)")
        }
        do {
            return try JSONDecoder().decode([StagingLedgerEntry].self, from: Data(contentsOf: url))
        } catch let error as DecodingError {
            throw SoakProfileError(message: "--ledger \(url.lastPathComponent): \(error.readableDescription)")
        } catch {
            throw SoakProfileError(message: "--ledger \(url.path): cannot read (\(error.localizedDescription))")
        }
    }
}
