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
            "-d",
            #"{"platform":"iOS","osVersion":"18.1","deviceModel":"iPhone","language":"en-US","deviceId":"curl-device-1"}"#,
        ])
        #expect(match.status == 201)
        #expect(match.body == #"{"matched":false,"matchMethod":"NONE"}"#)

        let aasa = try Self.curl(["-H", "Host: links.acme.test", "\(base)/.well-known/apple-app-site-association"])
        #expect(aasa.status == 200)
        #expect(aasa.body.contains("TEAM123456.com.example.acme"))

        let bad = try Self.curl([
            "-X", "POST", "\(base)/sdk/events", "-H", "Content-Type: application/json", "-d", "{}",
        ])
        #expect(bad.status == 401)
        #expect(bad.body.contains("Missing Authorization header"))

        process.interrupt()
        Self.waitForExit(process)
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
    }

    /// Waits at most `seconds` for `process` to exit after a signal; kills it and records an issue
    /// if it has not, so a child that ignored its Ctrl-C fails this test instead of hanging the run.
    static func waitForExit(_ process: Process, seconds: Double = 30, sourceLocation: SourceLocation = #_sourceLocation)
    {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning {
            Issue.record(
                "pid \(process.processIdentifier) still running \(seconds) s after its signal",
                sourceLocation: sourceLocation)
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }

    /// Starts `serve` with `arguments`; returns the process and its stdout / stderr pipes.
    static func launch(_ arguments: [String]) throws -> (process: Process, out: Pipe, err: Pipe) {
        let process = Process()
        process.executableURL = try binary()
        process.arguments = ["serve"] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return (process, out, err)
    }

    /// Reads stdout until a line satisfying `last` has arrived; returns every line so far.
    static func lines(_ pipe: Pipe, until last: (Substring) -> Bool) throws -> [Substring] {
        var buffer = Data()
        while true {
            let lines = String(decoding: buffer, as: UTF8.self).split(separator: "\n")
            if buffer.last == UInt8(ascii: "\n"), lines.contains(where: last) { return lines }
            let chunk = pipe.fileHandleForReading.availableData
            try #require(!chunk.isEmpty, "serve exited early; printed: \(String(decoding: buffer, as: UTF8.self))")
            buffer.append(chunk)
        }
    }

    /// Writes `json` to a temporary `name` and returns its path.
    static func configFile(_ name: String, _ json: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(json.utf8).write(to: url)
        return url.path
    }

    /// Runs serve expecting it to refuse: returns (exit status, stderr).
    static func refusal(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let (process, _, err) = try launch(arguments)
        let data = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("the banner shows keys, links, limits, X-Forwarded-For trust and a curl example that works as pasted")
    func bannerTellsHowToUseIt() async throws {
        let (process, out, _) = try Self.launch(["--port", "0"])
        defer { if process.isRunning { process.terminate() } }
        let lines = try Self.lines(out) { $0.contains("curl ") }
        let first = try #require(lines.first)
        #expect(first.hasPrefix("optolink-soak serve: staging emulator on http://127.0.0.1:"))
        #expect(first.hasSuffix(" (Ctrl-C to stop)"))
        let text = lines.joined(separator: "\n")
        for needle in [
            "org acme", "org globex", "Authorization: Bearer opl_sdk_test_…", "welcome", "promo", "hello",
            "match 30/60s, data 500/1s, session_identity 60/60s, events 600/60s", "X-Forwarded-For not trusted",
            "--show-keys prints them whole",
        ] {
            #expect(text.contains(needle), "banner lacks \(needle)")
        }
        #expect(!text.contains("acme_client") && !text.contains("globex_client"), "the banner redacts the keys")
        let curlLine = try #require(lines.first { $0.contains("curl ") })
        let command = "curl " + (curlLine.components(separatedBy: "curl ").dropFirst().joined(separator: "curl "))
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", command + " -w ' %{http_code}' --max-time 5"]
        let answer = Pipe()
        shell.standardOutput = answer
        try shell.run()
        let body = String(decoding: answer.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        #expect(body.hasSuffix(" 201"), "the pasted curl answered: \(body)")
        process.interrupt()
        Self.waitForExit(process)
        #expect(process.terminationStatus == 0)
    }

    @Test("--show-keys prints the fixture keys whole, for clients that need them")
    func showKeysPrintsThemWhole() async throws {
        let (process, out, _) = try Self.launch(["--port", "0", "--show-keys"])
        defer { if process.isRunning { process.terminate() } }
        let text = try Self.lines(out) { $0.contains("curl ") }.joined(separator: "\n")
        #expect(text.contains("Authorization: Bearer opl_sdk_test_acme_client "))
        #expect(!text.contains("--show-keys prints them whole"))
        process.interrupt()
        Self.waitForExit(process)
        #expect(process.terminationStatus == 0)
    }

    @Test("a locked serve: a token file padded with blanks and newlines works; health too is 401 without the token")
    func lockedServeTakesAPaddedTokenFile() async throws {
        let token = "adm-padded-token-7781"
        let file = try Self.configFile("token", "  \t\(token) \n\n")
        let (process, out, _) = try Self.launch(["--port", "0", "--admin-token-file", file])
        defer { if process.isRunning { process.terminate() } }
        let lines = try Self.lines(out) { $0.contains("curl ") }
        let base = try #require(lines.first?.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") })
        #expect(!lines.joined().contains(token), "the banner never shows the admin token")
        for path in ["/__admin/health", "/__admin/counters"] {
            #expect(try Self.curl(["\(base)\(path)"]).status == 401, "\(path) without the token")
            #expect(try Self.curl(["-H", "Authorization: Bearer wrong", "\(base)\(path)"]).status == 401)
            #expect(try Self.curl(["-H", "Authorization: Bearer \(token)", "\(base)\(path)"]).status == 200, "\(path)")
        }
        process.interrupt()
        Self.waitForExit(process)
        #expect(process.terminationStatus == 0)
    }

    @Test("--config's port and host are used unless --port/--host are given")
    func configPortIsUsed() async throws {
        // Port 0 in the file: a free port, not the 8080 default; trustForwardedFor from the file shows in the banner.
        let path = try Self.configFile("staging.json", #"{"port": 0, "host": "127.0.0.1", "trustForwardedFor": true}"#)
        let (process, out, _) = try Self.launch(["--config", path])
        defer { if process.isRunning { process.terminate() } }
        let lines = try Self.lines(out) { $0.contains("curl ") }
        #expect(lines[0].hasPrefix("optolink-soak serve: staging emulator on http://127.0.0.1:"))
        #expect(!lines[0].contains(":8080 "))
        #expect(lines.contains { $0.contains("X-Forwarded-For trusted") })
        process.interrupt()
        Self.waitForExit(process)

        // A file port that cannot be bound (1 is privileged) is overridden by --port 0.
        let privileged = try Self.configFile("staging.json", #"{"port": 1}"#)
        let (second, secondOut, _) = try Self.launch(["--config", privileged, "--port", "0"])
        defer { if second.isRunning { second.terminate() } }
        let banner = try Self.lines(secondOut) { $0.contains("curl ") }
        #expect(!banner[0].contains(":1 "))
        second.interrupt()
        Self.waitForExit(second)
        #expect(second.terminationStatus == 0)
    }

    @Test("a typo or wrong type in --config is refused with the file name and field path, exit 2")
    func badConfigIsRefused() throws {
        let typo = try Self.configFile("typo.json", #"{"limits": {"evnts": {"limit": 5, "windowSeconds": 1}}}"#)
        let refused = try Self.refusal(["--config", typo, "--port", "0"])
        #expect(refused.status == 2)
        #expect(
            refused.stderr
                == "error: serve: \(typo): limits.evnts: unknown field (expected one of match, data, session_identity, events, enabled, algorithm)\n"
        )
        let wrongType = try Self.configFile("type.json", #"{"limits": {"events": {"limit": "5", "windowSeconds": 1}}}"#)
        let typeRefused = try Self.refusal(["--config", wrongType, "--port", "0"])
        #expect(typeRefused.status == 2)
        #expect(
            typeRefused.stderr == "error: serve: \(wrongType): limits.events.limit: wrong type (expected a number)\n")
    }

    @Test("a port already in use is named in the error, exit 2")
    func bindFailureNamesTheAddress() throws {
        let (process, out, _) = try Self.launch(["--port", "0"])
        defer { if process.isRunning { process.terminate() } }
        let lines = try Self.lines(out) { $0.contains("Ctrl-C") }
        let url = try #require(lines[0].split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") })
        let port = try #require(url.split(separator: ":").last)
        let refused = try Self.refusal(["--port", String(port)])
        #expect(refused.status == 2)
        #expect(refused.stderr == "error: serve: cannot listen on 127.0.0.1:\(port): Address already in use\n")
        process.interrupt()
        Self.waitForExit(process)
    }
}

/// Ctrl-C reaches `serve` however early it comes: a SIGINT sent the moment the banner's first line
/// is read always stops it with exit 0. (With a libdispatch signal source instead of the trap's
/// own `sigaction` handler, a signal sent while libdispatch is still registering the source is
/// dropped: 3 of 30 such launches never exit.)
@Suite("optolink-soak serve: an early Ctrl-C", .timeLimit(.minutes(2)))
struct ServeEarlySignalTests {
    @Test("SIGINT right after the first banner line stops serve, 12 launches in a row")
    func earlyInterruptAlwaysStops() throws {
        for _ in 0..<12 {
            let (process, out, _) = try ServeCommandTests.launch(["--port", "0"])
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
            var buffer = Data()
            while !buffer.contains(UInt8(ascii: "\n")) {
                let chunk = out.fileHandleForReading.availableData
                try #require(!chunk.isEmpty, "serve exited before printing its URL")
                buffer.append(chunk)
            }
            process.interrupt()
            ServeCommandTests.waitForExit(process)
            #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        }
    }
}
