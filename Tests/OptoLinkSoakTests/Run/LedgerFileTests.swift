import Foundation
import OptoLinkStaging
import SoakRecords
import SoakSupport
import Synchronization
import Testing

import OptoLinkSoak

/// `--ledger-file` on `run` and `serve`, and a remote `--ledger` in JSON lines read as a stream (issue 12).
@Suite struct LedgerFileTests {
    static func entry(_ sequence: Int) -> StagingLedgerEntry {
        StagingLedgerEntry(
            sequence: sequence, arrivedAt: 1_790_000_000 + Double(sequence), endpoint: "events", deviceId: "device-1",
            apiKeySuffix: "client", eventName: "e", properties: ["opl_corr": "r:d:\(sequence)"])
    }

    static func write(_ text: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ledger-\(UUID().uuidString).jsonl")
        try Data(text.utf8).write(to: url)
        return url
    }

    @Test("--ledger-file parses on run (embedded only) and serve")
    func flags() throws {
        guard
            let run = try SoakCommandLine.parse(["run", "p.json", "--ledger-file", "/tmp/l.jsonl"]).subcommand(
                RunSubcommand.self)?.options
        else {
            Issue.record("not a run")
            return
        }
        #expect(run.ledgerFilePath == "/tmp/l.jsonl")
        guard
            let serve = try SoakCommandLine.parse(["serve", "--ledger-file", "/tmp/s.jsonl"]).subcommand(
                ServeSubcommand.self)?.options
        else {
            Issue.record("not serve")
            return
        }
        #expect(serve.ledgerFilePath == "/tmp/s.jsonl")
        #expect(
            throws: SoakUsageError(
                message: "--ledger-file: only with the embedded emulator (a remote backend's ledger: --ledger FILE)")
        ) {
            try SoakCommandLine.parse(["run", "p.json", "--base-url", "http://127.0.0.1:1", "--ledger-file", "x"])
        }
    }

    @Test("a remote --ledger in JSON lines streams entry by entry, blank lines skipped; an array still reads")
    func remoteJSONLines() async throws {
        let encoder = JSONEncoder()
        let lines = try (1...2_000).map { String(decoding: try encoder.encode(Self.entry($0)), as: UTF8.self) }
        let url = try Self.write(lines.joined(separator: "\n") + "\n\n")
        defer { try? FileManager.default.removeItem(at: url) }
        var seen: [Int] = []
        let count = try await RemoteBackend(baseURL: URL(fileURLWithPath: "/"), ledgerFile: url).readLedger {
            seen.append($0.sequence)
        }
        #expect(count == 2_000)
        #expect(seen == Array(1...2_000))
        #expect(try RemoteBackend.readLedger(url).count == 2_000)
        let array = try Self.write(String(decoding: try encoder.encode([Self.entry(1), Self.entry(2)]), as: UTF8.self))
        defer { try? FileManager.default.removeItem(at: array) }
        let fromArray = try await RemoteBackend(baseURL: URL(fileURLWithPath: "/"), ledgerFile: array).readLedger { _ in
        }
        #expect(fromArray == 2)
    }

    @Test("a bad line in a JSON-lines ledger names the file and the line")
    func badLine() async throws {
        let good = String(decoding: try JSONEncoder().encode(Self.entry(1)), as: UTF8.self)
        let url = try Self.write(good + "\n" + #"{"sequence": "x"}"# + "\n")
        defer { try? FileManager.default.removeItem(at: url) }
        await #expect {
            _ = try await RemoteBackend(baseURL: URL(fileURLWithPath: "/"), ledgerFile: url).readLedger { _ in }
        } throws: { error in
            "\(error)".contains("\(url.lastPathComponent) line 2")
        }
    }

    /// A line longer than the 1 MiB read chunk (an entry with a 3 MiB property) is read whole and
    /// in order with the lines around it, once per chunk it spans (the search for its end does
    /// not start over); past the longest line allowed it is an error naming the line.
    @Test func aLineLongerThanAReadChunk() throws {
        var long = Self.entry(2)
        long.properties = ["opl_corr": "r:d:2", "blob": String(repeating: "x", count: 3 << 20)]
        let lines = try [Self.entry(1), long, Self.entry(3)].map {
            String(decoding: try JSONEncoder().encode($0), as: UTF8.self)
        }
        let url = try Self.write(lines.joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(at: url) }
        var read: [LedgerRow] = []
        #expect(try LedgerLines.read(url, label: "--ledger") { read.append($0) } == 3)
        #expect(read.map(\.sequence) == [1, 2, 3])
        #expect(read[1].properties?["blob"]?.count == 3 << 20)
        #expect {
            _ = try LedgerLines.read(url, label: "--ledger", longestLine: 1 << 20) { _ in }
        } throws: { error in
            "\(error)"
                == "--ledger \(url.lastPathComponent) line 2: longer than 1048576 bytes (a ledger entry is a few hundred)"
        }
    }

    /// A JSON-lines ledger saved with a byte order mark is still JSON lines (not taken for a
    /// malformed array).
    @Test func aByteOrderMarkBeforeJSONLines() async throws {
        let lines = try [Self.entry(1), Self.entry(2)].map {
            String(decoding: try JSONEncoder().encode($0), as: UTF8.self)
        }
        let url = try Self.write("\u{FEFF}" + lines.joined(separator: "\n"))
        defer { try? FileManager.default.removeItem(at: url) }
        var read: [Int] = []
        let count = try await RemoteBackend(baseURL: URL(fileURLWithPath: "/"), ledgerFile: url).readLedger {
            read.append($0.sequence)
        }
        #expect(count == 2 && read == [1, 2])
    }
}

/// The ledger's JSON wire format, from both sides: what the emulator writes and serves, the
/// records read (the runner's ``LedgerRow`` decodes the emulator's ``StagingLedgerEntry``).
@Suite struct LedgerWireTests {
    @Test("an emulator entry, encoded, decodes into a ledger row with every field equal", arguments: [true, false])
    func entryDecodesAsRow(full: Bool) throws {
        let entry = StagingLedgerEntry(
            sequence: 42, arrivedAt: 1_790_000_000.125, endpoint: full ? "events" : "session", deviceId: "device-é",
            apiKeySuffix: "0042", eventName: full ? "purchase" : nil, externalId: full ? "user-7" : nil,
            properties: full ? ["opl_corr": "r:d1:3", "k": "v"] : nil, faultAfterCommit: full ? "drop" : nil)
        let row = try JSONDecoder().decode(LedgerRow.self, from: JSONEncoder().encode(entry))
        #expect(row.sequence == entry.sequence)
        #expect(row.arrivedAt == entry.arrivedAt)
        #expect(row.endpoint == entry.endpoint)
        #expect(row.deviceId == entry.deviceId)
        #expect(row.apiKeySuffix == entry.apiKeySuffix)
        #expect(row.eventName == entry.eventName)
        #expect(row.externalId == entry.externalId)
        #expect(row.properties == entry.properties)
        #expect(row.faultAfterCommit == entry.faultAfterCommit)
        #expect(row == LedgerRow(entry), "the runner's conversion gives the decoded row")
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(try encoder.encode(row) == encoder.encode(entry), "a row encodes to the emulator's JSON")
    }

    @Test(
        "the emulator keeps the key's last 4 characters, the ones its redaction shows, and none of a short key",
        arguments: [
            ("opl_sdk_live_S3CR3TVALUE0042", "0042"), ("opl_sdk_test_acme_client", ""),
            ("plain-secret-value-7781", "7781"), ("k", ""),
        ])
    func suffixIsTheRedactionsLastFour(key: String, suffix: String) throws {
        let ledger = StagingLedger()
        let seen = Mutex<[StagingLedgerEntry]>([])
        ledger.observe { entry in seen.withLock { $0.append(entry) } }
        ledger.append(arrivedAt: 1, endpoint: .session, deviceId: "d", apiKey: key)
        let entry = try #require(seen.withLock { $0.first })
        #expect(entry.apiKeySuffix == suffix)
        #expect(SecretRedaction.redact(key).hasSuffix(SecretRedaction.marker + suffix))
        let row = try JSONDecoder().decode(LedgerRow.self, from: JSONEncoder().encode(entry))
        #expect(row.apiKeySuffix == suffix)
    }
}
