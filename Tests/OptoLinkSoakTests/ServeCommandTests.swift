import Foundation
import Testing

/// `optolink-soak serve` as a user runs it: the built binary, a real port, curl, Ctrl-C.
@Suite("optolink-soak serve (the binary)", .timeLimit(.minutes(1)))
struct ServeCommandTests {
    /// The CLI binary sits next to the test bundle in the build directory.
    static func binary() throws -> URL {
        let dir = try #require(Bundle.main.executableURL).deletingLastPathComponent()
        let url = dir.appendingPathComponent("optolink-soak")
        try #require(FileManager.default.isExecutableFile(atPath: url.path), "built CLI not found at \(url.path)")
        return url
    }

    /// Runs curl and returns (HTTP status, body).
    static func curl(_ arguments: [String]) throws -> (status: Int, body: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["curl", "-s", "-w", "\n%{http_code}", "--max-time", "5"] + arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.last ?? "") ?? -1
        return (status, lines.dropLast().joined(separator: "\n"))
    }

    @Test("serve --port 0 prints its URL, answers curl on /match and AASA, and exits 0 on SIGINT")
    func serveAnswersCurl() async throws {
        let process = Process()
        process.executableURL = try Self.binary()
        process.arguments = ["serve", "--port", "0"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        // First line: "optolink-soak serve: staging emulator on http://127.0.0.1:PORT (Ctrl-C to stop)".
        var buffer = Data()
        while !buffer.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            try #require(!chunk.isEmpty, "serve exited before printing its URL")
            buffer.append(chunk)
        }
        let line = String(decoding: buffer, as: UTF8.self)
        let base = try #require(line.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") })

        let match = try Self.curl([
            "-X", "POST", "\(base)/match", "-H", "Content-Type: application/json",
            "-d", #"{"platform":"iOS","osVersion":"18.1","deviceModel":"iPhone","language":"en-US","deviceId":"curl-device-1"}"#,
        ])
        #expect(match.status == 201)
        #expect(match.body == #"{"matched":false,"matchMethod":"NONE"}"#)

        let aasa = try Self.curl(["-H", "Host: links.acme.test", "\(base)/.well-known/apple-app-site-association"])
        #expect(aasa.status == 200)
        #expect(aasa.body.contains("TEAM123456.com.example.acme"))

        let bad = try Self.curl(["-X", "POST", "\(base)/sdk/events", "-H", "Content-Type: application/json", "-d", "{}"])
        #expect(bad.status == 401)
        #expect(bad.body.contains("Missing Authorization header"))

        process.interrupt()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
    }
}
