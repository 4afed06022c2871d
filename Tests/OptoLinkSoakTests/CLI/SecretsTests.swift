import Foundation
import Testing

import OptoLinkSoak

/// Secrets: files and environment instead of the command line, the admin door.
@Suite("Secrets")
struct SecretsTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("soak-secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func file(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test(
        "a key file's surrounding whitespace and trailing newline are trimmed; empty and multi-line files are refused")
    func keyFile() throws {
        let path = try file("key", "  opl_sdk_live_S3CR3TVALUE0042 \n")
        #expect(try SecretSources.secret(inFile: path, flag: "--api-key-file") == "opl_sdk_live_S3CR3TVALUE0042")
        let crlf = try file("key-crlf", "opl_sdk_live_S3CR3TVALUE0042\r\n")
        #expect(try SecretSources.secret(inFile: crlf, flag: "--api-key-file") == "opl_sdk_live_S3CR3TVALUE0042")
        let empty = try file("empty", " \n")
        #expect(
            throws: SoakUsageError(
                message: "--api-key-file \(empty): the file is empty (write the secret on its one line)")
        ) {
            try SecretSources.secret(inFile: empty, flag: "--api-key-file")
        }
        let two = try file("two", "a\nb\n")
        #expect(
            throws: SoakUsageError(
                message: "--admin-token-file \(two): holds more than one line (write only the secret)")
        ) {
            try SecretSources.secret(inFile: two, flag: "--admin-token-file")
        }
        let missing = directory.appendingPathComponent("missing").path
        #expect(throws: SoakUsageError(message: "--api-key-file \(missing): no such file")) {
            try SecretSources.secret(inFile: missing, flag: "--api-key-file")
        }
    }

    @Test("a header file: one 'Name: value' a line, blank lines and # comments skipped; a bad line names file and line")
    func headerFile() throws {
        let path = try file("headers", "# proxy\n\nX-Proxy-Token: PROXYSECRET-7781-zeta\r\n  X-Team: soak  \n")
        #expect(
            try SecretSources.headers(inFile: path) == [
                SoakExtraHeader(name: "X-Proxy-Token", value: "PROXYSECRET-7781-zeta"),
                SoakExtraHeader(name: "X-Team", value: "soak"),
            ])
        let bad = try file("bad", "X-Ok: 1\nno colon here\n")
        #expect(
            throws: SoakUsageError(
                message: "--header-file \(bad), line 2: is not 'Name: value' (no colon)")
        ) { try SecretSources.headers(inFile: bad) }
        let owned = try file("owned", "Authorization: Bearer x\n")
        #expect(throws: SoakUsageError.self) { try SecretSources.headers(inFile: owned) }
        let bare = try file("bare", "PROXYSECRET-7781-zeta\n")
        do {
            _ = try SecretSources.headers(inFile: bare)
            Issue.record("a bare token was read as a header")
        } catch {
            #expect(!"\(error)".contains("PROXYSECRET"), "the error does not echo the line")
        }
    }

    @Test("run: --api-key-file and --header-file are read; --api-key and --header are noted as visible in ps")
    func runReadsFiles() throws {
        let key = try file("key", "opl_sdk_live_S3CR3TVALUE0042\n")
        let headers = try file("headers", "X-Proxy-Token: PROXYSECRET-7781-zeta\n")
        let token = try file("token", "\tadm-token-0042\n")
        guard
            let o = try SoakCommandLine.parse([
                "run", "p.json", "--base-url", "http://127.0.0.1:9", "--api-key-file", key, "--header-file", headers,
                "--header", "X-Team: soak", "--admin-token-file", token,
            ]).subcommand(RunSubcommand.self)?.options
        else {
            Issue.record("not a run")
            return
        }
        #expect(o.apiKey == "opl_sdk_live_S3CR3TVALUE0042" && !o.apiKeyOnCommandLine)
        #expect(o.headers.map(\.name) == ["X-Team", "X-Proxy-Token"])
        #expect(o.adminToken == "adm-token-0042")
        guard
            let flag = try SoakCommandLine.parse([
                "run", "p.json", "--base-url", "http://x:9", "--api-key", "k",
            ]).subcommand(RunSubcommand.self)?.options
        else {
            Issue.record("not a run")
            return
        }
        #expect(flag.apiKeyOnCommandLine && flag.apiKey == "k")
        #expect(SecretSources.commandLineKeyNote.contains("process list"))
        #expect(SecretSources.commandLineNotes(flag) == [SecretSources.commandLineKeyNote])
        // The files and a header on the command line: only the header gets its note.
        #expect(o.headerOnCommandLine)
        #expect(SecretSources.commandLineNotes(o) == [SecretSources.commandLineHeaderNote])
        #expect(SecretSources.commandLineHeaderNote.contains("process list"))
        #expect(SecretSources.commandLineHeaderNote.contains("--header-file"))
        guard
            let filesOnly = try SoakCommandLine.parse([
                "run", "p.json", "--base-url", "http://127.0.0.1:9", "--api-key-file", key, "--header-file", headers,
            ]).subcommand(RunSubcommand.self)?.options
        else {
            Issue.record("not a run")
            return
        }
        #expect(SecretSources.commandLineNotes(filesOnly).isEmpty)
        let capacity = try CapacitySubcommand(arguments: ["p.json", "--header", "X-Proxy-Token: t0k3n-value-9911"])
        #expect(SecretSources.commandLineNotes(capacity.options.run) == [SecretSources.commandLineHeaderNote])
        #expect(throws: SoakUsageError.self) {
            try SoakCommandLine.parse([
                "run", "p.json", "--base-url", "http://x:9", "--api-key", "k", "--api-key-file", key,
            ])
        }
        #expect(
            throws: SoakUsageError(
                message: "--header X-Proxy-Token: given twice (by --header and by --header-file); give each header once"
            )
        ) {
            try SoakCommandLine.parse([
                "run", "p.json", "--header-file", headers, "--header", "X-Proxy-Token: again",
            ])
        }
    }

    @Test("precedence: the flag, then its file, then the environment; the environment's key only with --base-url")
    func environment() throws {
        let environment = [
            SecretSources.apiKeyVariable: "opl_sdk_live_FROMENV00000001", SecretSources.orgKeyVariable: "envorg",
            SecretSources.adminTokenVariable: " env-token \n", SecretSources.headersVariable: "X-Env: 1",
        ]
        var remote = SoakRunOptions(profilePath: "p.json")
        remote.baseURL = URL(string: "http://127.0.0.1:9")
        var fromEnvironment = remote
        try SecretSources.resolve(&fromEnvironment, files: RunSecretFiles(), environment: environment)
        #expect(fromEnvironment.apiKey == "opl_sdk_live_FROMENV00000001" && fromEnvironment.orgKey == "envorg")
        #expect(fromEnvironment.adminToken == "env-token")
        #expect(fromEnvironment.headers == [SoakExtraHeader(name: "X-Env", value: "1")])

        var fromFlag = remote
        fromFlag.apiKey = "opl_sdk_live_FROMFLAG0000001"
        fromFlag.orgKey = "flagorg"
        var files = RunSecretFiles()
        files.adminToken = try file("token", "file-token\n")
        try SecretSources.resolve(&fromFlag, files: files, environment: environment)
        #expect(fromFlag.apiKey == "opl_sdk_live_FROMFLAG0000001" && fromFlag.orgKey == "flagorg")
        #expect(fromFlag.adminToken == "file-token")

        var embeddedWithFile = SoakRunOptions(profilePath: "p.json")
        var keyOnly = RunSecretFiles()
        keyOnly.apiKey = try file("key-embedded", "opl_sdk_live_FROMFILE0000001")
        #expect(
            throws: SoakUsageError(
                message: "--api-key-file: only with --base-url (the embedded emulator uses its fixtures)")
        ) {
            try SecretSources.resolve(&embeddedWithFile, files: keyOnly, environment: [:])
        }
        var fromFile = remote
        files.apiKey = try file("key", "opl_sdk_live_FROMFILE0000001")
        try SecretSources.resolve(&fromFile, files: files, environment: environment)
        #expect(fromFile.apiKey == "opl_sdk_live_FROMFILE0000001")

        var embedded = SoakRunOptions(profilePath: "p.json")
        try SecretSources.resolve(&embedded, files: RunSecretFiles(), environment: environment)
        #expect(embedded.apiKey == nil && embedded.orgKey == nil, "the embedded emulator keeps its fixtures' key")
    }

    @Test("a --base-url with credentials in it is refused before they reach a report")
    func credentialsInTheBaseURL() {
        #expect(throws: SoakUsageError.self) {
            try SoakCommandLine.parse(["run", "p.json", "--base-url", "https://soak:PW-SECRET-99@staging.example"])
        }
        do {
            _ = try SoakCommandLine.parse(["run", "p.json", "--base-url", "https://soak:PW-SECRET-99@staging.example"])
        } catch {
            #expect(!"\(error)".contains("PW-SECRET-99"))
        }
    }

    @Test("--processes hands the key and the headers to its shards in the environment, never in their arguments")
    func shardsGetSecretsInTheEnvironment() {
        var options = SoakRunOptions(profilePath: "p.json")
        options.baseURL = URL(string: "http://127.0.0.1:9")
        options.apiKey = "opl_sdk_live_S3CR3TVALUE0042"
        options.headers = [SoakExtraHeader(name: "X-Proxy-Token", value: "PROXYSECRET-7781-zeta")]
        options.adminToken = "adm-token-0042"
        options.processes = 2
        let args = ProcessesRun.shardArguments(
            options, shard: SoakShard(index: 0, count: 2), startAt: 1_800_000_000, runId: "abc",
            baseURL: URL(string: "http://127.0.0.1:9")!, out: URL(fileURLWithPath: "/r/shard-0"))
        let joined = args.joined(separator: " ")
        #expect(!joined.contains("S3CR3T") && !joined.contains("PROXYSECRET") && !joined.contains("adm-token"))
        #expect(!args.contains("--api-key") && !args.contains("--header"))
        let environment = ProcessesRun.shardEnvironment(options, inherited: ["PATH": "/bin"])
        #expect(environment[SecretSources.apiKeyVariable] == "opl_sdk_live_S3CR3TVALUE0042")
        #expect(environment[SecretSources.headersVariable] == "X-Proxy-Token: PROXYSECRET-7781-zeta")
        #expect(environment[SecretSources.adminTokenVariable] == "adm-token-0042")
        #expect(environment["PATH"] == "/bin")
        // An embedded run's shards drive the parent's emulator with the fixtures' key, whatever the shell has.
        var embedded = SoakRunOptions(profilePath: "p.json")
        embedded.processes = 2
        let inherited = ProcessesRun.shardEnvironment(
            embedded, inherited: [SecretSources.apiKeyVariable: "opl_sdk_live_OTHER000000001"])
        #expect(inherited[SecretSources.apiKeyVariable] == nil)
    }

    @Test("profile.json keeps the key redacted and says so; keys differing only behind the redaction are one plan")
    func profileRedaction() throws {
        let json = #"""
            {"name": "p", "devices": {"count": 1}, "journeys": [{"name": "j", "steps": [{"kind": "firstLaunch"}]}],
             "load": {"model": "closed", "iterations": 1}, "sdk": {"apiKey": "opl_sdk_live_S3CR3TVALUE0042"},
             "backend": {"fixtures": {"orgs": [{"orgKey": "acme", "apiKeys": [
               {"key": "opl_sdk_live_S3CR3TVALUE0042", "tier": "CLIENT"}, {"key": "opl_sdk_x", "tier": "CLIENT"},
               {"key": "opl_sdk_y", "tier": "CLIENT"}]}]}}}
            """#
        let profile = try SoakProfile.decode(Data(json.utf8))
        let redacted = profile.redactingSecrets()
        #expect(redacted.sdk.apiKey == "opl_sdk_live_…0042" && redacted.sdk.apiKeyRedacted == true)
        let encoded = String(decoding: try JSONEncoder().encode(redacted), as: UTF8.self)
        #expect(!encoded.contains("S3CR3TVALUE0042") && !encoded.contains("opl_sdk_x"))
        #expect(encoded.contains(#""apiKeyRedacted":true"#))
        // The redacted profile reads back (two short keys redact alike, so they are told apart).
        let readBack = try SoakProfile.decode(Data(encoded.utf8))
        #expect(readBack.redactingSecrets() == readBack)
        #expect(ProfileFingerprint.of(readBack) == ProfileFingerprint.of(profile))
        var other = profile
        other.sdk.apiKey = "opl_sdk_live_OTHERVALUE0042"
        #expect(ProfileFingerprint.of(other) == ProfileFingerprint.of(profile))
        other.sdk.apiKey = "opl_sdk_live_OTHERVALUE0043"
        #expect(ProfileFingerprint.of(other) != ProfileFingerprint.of(profile))
        // A report's profile cannot be run again without the key.
        #expect(throws: SoakProfileError.self) { try SoakRunOptions(profilePath: "p.json").apply(to: readBack) }
        var withKey = SoakRunOptions(profilePath: "p.json")
        withKey.apiKey = "opl_sdk_live_S3CR3TVALUE0042"
        #expect(try withKey.apply(to: readBack).sdk.apiKeyRedacted == nil)
    }

    @Test(
        "the admin door: loopback hosts may go without a token, any other host may not",
        arguments: [
            ("127.0.0.1", true), ("127.9.8.7", true), ("::1", true), ("[::1]", true), ("localhost", true),
            ("::ffff:127.0.0.1", true), ("0.0.0.0", false), ("::", false), ("10.0.0.5", false),
            ("128.0.0.1", false), ("staging.example.com", false),
        ])
    func loopback(host: String, loopback: Bool) throws {
        #expect(AdminDoor.isLoopback(host) == loopback)
        if loopback {
            #expect(try AdminDoor.token(host: host, file: nil, environment: [:]) == nil)
        } else {
            #expect(throws: SoakUsageError.self) { try AdminDoor.token(host: host, file: nil, environment: [:]) }
        }
        let token = try file("token", "  adm-token-0042\n")
        #expect(try AdminDoor.token(host: host, file: token, environment: [:]) == "adm-token-0042")
        #expect(try AdminDoor.token(host: host, file: nil, environment: ["OPTOLINK_ADMIN_TOKEN": "t"]) == "t")
    }

    @Test(
        "serve --host 0.0.0.0 without a token exits 2 before it binds",
        .enabled(if: ProcessInfo.processInfo.environment[SecretSources.adminTokenVariable] == nil))
    func serveRefusesAnOpenDoor() async {
        #expect(await OptoLinkSoak.main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 2)
    }
}
