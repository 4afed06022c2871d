import Foundation
import Testing

import OptoLinkSoak

extension WholeRuns {
    /// No secret in any output: `run`, `run --processes`, `merge`, `compare` and `capacity` of the real
    /// executable, with a distinctive key (given through the profile itself) and a distinctive
    /// `--header` value (from a header file and on the command line), leave neither in any file
    /// they write nor in what they print.
    @Suite("Secrets end to end")
    struct SecretsEndToEndTests {
        static let key = "opl_sdk_live_S3CR3TVALUE0042"
        static let headerValue = "PROXYSECRET-7781-zeta"

        static let profile = """
            {"name": "secrets", "seed": 5,
             "devices": {"count": 6, "clipboardSurvives": 1},
             "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}, {"kind": "event", "name": "app_open"}]}],
             "load": {"model": "open", "startRate": 6, "stages": [{"duration": 1, "target": 6}], "iterations": 6,
                      "grace": 60},
             "sdk": {"apiKey": "\(key)", "timeout": 5},
             "backend": {"fixtures": {"orgs": [{"orgKey": "acme", "apiKeys": [{"key": "\(key)", "tier": "CLIENT"}],
                         "links": [{"shortCode": "welcome", "linkId": "lnk_welcome", "path": "/welcome"}]}]}},
             "expect": {"thresholds": []}}
            """

        /// Runs the executable with `arguments`; its exit status and everything it printed.
        static func run(_ executable: URL, _ arguments: [String], log: URL) throws -> (Int32, String) {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let output = try FileHandle(forWritingTo: log)
            defer { try? output.close() }
            let process = Process()
            process.executableURL = executable
            process.arguments = arguments
            var environment = ProcessInfo.processInfo.environment
            for name in [SecretSources.apiKeyVariable, SecretSources.headersVariable, SecretSources.adminTokenVariable]
            {
                environment[name] = nil
            }
            process.environment = environment
            process.standardOutput = output
            process.standardError = output
            try process.run()
            process.waitUntilExit()
            return (process.terminationStatus, (try? String(contentsOf: log, encoding: .utf8)) ?? "")
        }

        @Test("run, run --processes, merge, compare and capacity leave no key and no header value anywhere")
        func noSecretInAnyOutput() throws {
            let executable = try #require(
                ProcessesRunTests.executable, "build the optolink-soak product (swift build --build-tests)")
            let root = FileManager.default.temporaryDirectory.appendingPathComponent(
                "soak-secrets-\(UUID().uuidString)")
            let inputs = root.appendingPathComponent("inputs")
            let outputs = root.appendingPathComponent("outputs")
            try FileManager.default.createDirectory(at: inputs, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: root) }
            let profile = inputs.appendingPathComponent("secrets.json")
            try Data(Self.profile.utf8).write(to: profile)
            let headers = inputs.appendingPathComponent("headers.txt")
            try Data("# the auth proxy's token\nX-Proxy-Token: \(Self.headerValue)\n".utf8).write(to: headers)
            let whole = outputs.appendingPathComponent("whole")
            let sharded = outputs.appendingPathComponent("sharded")
            let merged = outputs.appendingPathComponent("merged")
            let compared = outputs.appendingPathComponent("compared")
            let capacity = outputs.appendingPathComponent("capacity")
            let logs = outputs.appendingPathComponent("logs")
            try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)

            let steps: [(String, [String])] = [
                (
                    "run",
                    [
                        "run", profile.path, "--out", whole.path, "--header-file", headers.path, "--no-progress",
                        "--junit", whole.appendingPathComponent("junit.xml").path,
                    ]
                ),
                (
                    "processes",
                    [
                        "run", profile.path, "--out", sharded.path, "--processes", "2", "--no-progress",
                        "--header", "X-Proxy-Token: \(Self.headerValue)",
                        "--junit", sharded.appendingPathComponent("junit.xml").path,
                    ]
                ),
                (
                    "merge",
                    [
                        "merge", sharded.appendingPathComponent("shards/shard-0").path,
                        sharded.appendingPathComponent("shards/shard-1").path, "--out", merged.path,
                    ]
                ),
                (
                    "compare",
                    [
                        "compare", whole.path, merged.path, "--out", compared.path,
                        "--junit", compared.appendingPathComponent("junit.xml").path,
                    ]
                ),
                (
                    // One probe of 1 s held at the maximum; the generator's limits lifted, so a busy
                    // machine cannot make it invalid (this run checks outputs, not the generator).
                    "capacity",
                    [
                        "capacity", profile.path, "--out", capacity.path, "--slo", "http.failed.rate < 0.5",
                        "--min-rate", "6", "--max-rate", "6", "--probe-seconds", "1", "--warmup", "0",
                        "--header", "X-Proxy-Token: \(Self.headerValue)", "--max-late-starts", "100%",
                        "--max-dropped", "100%", "--max-start-lag", "3600s", "--max-generator-cpu", "100%",
                    ]
                ),
            ]
            var printed = ""
            for (name, arguments) in steps {
                let (status, output) = try Self.run(executable, arguments, log: logs.appendingPathComponent(name))
                #expect(status == 0, "\(name) exited \(status): \(output)")
                printed += output
            }
            // The runs used the key: every SDK call was answered by the emulator that knows it.
            let summary =
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: whole.appendingPathComponent("summary.json"))) as? [String: Any]
            #expect(summary?["result"] as? String == "passed")

            var files: [URL] = []
            let walker = FileManager.default.enumerator(at: outputs, includingPropertiesForKeys: [.isRegularFileKey])
            while let url = walker?.nextObject() as? URL {
                if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { files.append(url) }
            }
            #expect(files.count > 20, "the reports were written: \(files.map(\.lastPathComponent))")
            for file in files {
                let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
                #expect(!text.contains(Self.key), "\(file.path) holds the API key")
                #expect(!text.contains(Self.headerValue), "\(file.path) holds the header value")
                #expect(!text.contains("S3CR3TVALUE"), "\(file.path) holds part of the key")
            }
            #expect(!printed.contains(Self.key) && !printed.contains(Self.headerValue))
            #expect(printed.contains(SecretSources.commandLineHeaderNote), "--header is noted as visible in ps")
            #expect(files.contains { $0.path.hasSuffix("capacity/report.html") })
            let profileJSON = try String(contentsOf: whole.appendingPathComponent("profile.json"), encoding: .utf8)
            #expect(profileJSON.contains("opl_sdk_live_…0042"))
            #expect(
                profileJSON.contains(#""apiKeyRedacted" : true"#) || profileJSON.contains(#""apiKeyRedacted":true"#))
        }
    }
}
