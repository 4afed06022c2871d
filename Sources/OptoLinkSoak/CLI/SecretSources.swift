import Foundation

/// Where `run` and `serve` take their secrets from besides the command line, so that none has
/// to sit in the process list: a file (`--api-key-file`, `--header-file`, `--admin-token-file`)
/// or an environment variable. Precedence, the same for every secret: a flag on the command
/// line, then its file, then the environment; `--api-key` and `--api-key-file` together are an error.
package enum SecretSources {
    /// The CLIENT API key of a `run --base-url` (the embedded emulator uses its fixtures' key).
    package static let apiKeyVariable = "OPTOLINK_API_KEY"
    /// The org key of a `run --base-url`.
    package static let orgKeyVariable = "OPTOLINK_ORG_KEY"
    /// The emulator's admin token: `serve` requires it, `run` sends it to `/__admin/*`.
    package static let adminTokenVariable = "OPTOLINK_ADMIN_TOKEN"
    /// Extra header lines (`Name: value`, one a line, as in a `--header-file`); how `run
    /// --processes` hands its headers to the shard processes without putting them in their arguments.
    package static let headersVariable = "OPTOLINK_HEADERS"

    /// The `SECRETS` section of `run --help`.
    package static let runHelp = """


        SECRETS (keep them out of the process list; see README.md, "Secrets"):
          API key              --api-key-file FILE, else \(apiKeyVariable) (with --base-url only);
                               --api-key KEY works too but shows in ps, and says so. Giving both
                               --api-key and --api-key-file is an error. Org key: --org-key, else
                               \(orgKeyVariable)
          headers              --header and --header-file lines, plus \(headersVariable) (the same
                               format); a name given twice is an error. --header values show
                               in ps, and the run says so: keep secret ones in --header-file
          admin token          --admin-token-file FILE, else \(adminTokenVariable)
          Precedence: the flag, then its file, then the environment. --processes hands all
          three to its shards in their environment, not their arguments. Reports and logs
          carry keys and header values only redacted, as opl_sdk_live_…0042 (prefix and
          last 4 characters); profile.json says so (sdk.apiKeyRedacted)
        """

    /// What `run --api-key KEY` prints once on stderr.
    package static let commandLineKeyNote =
        "note: --api-key is visible to every user of this machine in the process list (ps, /proc/<pid>/cmdline); "
        + "give the key with --api-key-file FILE or \(apiKeyVariable) instead"

    /// What `run --header 'Name: value'` prints once on stderr.
    package static let commandLineHeaderNote =
        "note: --header values are visible to every user of this machine in the process list (ps, /proc/<pid>/cmdline); "
        + "give secret headers with --header-file FILE or \(headersVariable) instead"

    /// The notes `run` and `capacity` print once on stderr for secrets given on the command line.
    package static func commandLineNotes(_ options: SoakRunOptions) -> [String] {
        (options.apiKeyOnCommandLine ? [commandLineKeyNote] : [])
            + (options.headerOnCommandLine ? [commandLineHeaderNote] : [])
    }

    /// The one secret in the file at `path`: its text with surrounding whitespace and line
    /// breaks trimmed (a Kubernetes Secret mounted as a file, `echo KEY > file`).
    ///
    /// - Throws: ``SoakUsageError`` naming `flag` and the file when it cannot be read, is
    ///   empty, or holds more than one line.
    package static func secret(inFile path: String, flag: String) throws -> String {
        let text = try contents(of: path, flag: flag)
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !secret.isEmpty else {
            throw SoakUsageError(message: "\(flag) \(path): the file is empty (write the secret on its one line)")
        }
        guard !secret.contains(where: \.isNewline) else {
            throw SoakUsageError(message: "\(flag) \(path): holds more than one line (write only the secret)")
        }
        return secret
    }

    /// The headers of a `--header-file`: one `Name: value` a line; blank lines and lines
    /// starting with `#` are skipped.
    ///
    /// - Throws: ``SoakUsageError`` naming the file and the line of the first malformed one.
    package static func headers(inFile path: String) throws -> [SoakExtraHeader] {
        try headers(in: contents(of: path, flag: "--header-file"), source: "--header-file \(path)")
    }

    /// The headers of `text` in the `--header-file` format; `source` names it in errors.
    package static func headers(in text: String, source: String) throws -> [SoakExtraHeader] {
        var headers: [SoakExtraHeader] = []
        // `\r\n` is one Character, a newline like `\n`: files written on Windows split the same.
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            // The line itself is never echoed: a malformed one may be a bare token.
            guard line.contains(":") else {
                throw SoakUsageError(message: "\(source), line \(index + 1): is not 'Name: value' (no colon)")
            }
            let header: SoakExtraHeader
            do {
                header = try SoakExtraHeader.parse(line)
            } catch let error as SoakUsageError {
                throw SoakUsageError(message: "\(source), line \(index + 1): \(error.message)")
            }
            headers.append(header)
        }
        return headers
    }

    /// Completes `options` from the files it names and from `environment`, in the order of
    /// precedence above. The environment's key and org key apply only with `--base-url`.
    ///
    /// - Throws: ``SoakUsageError`` for an unreadable or malformed file, both `--api-key` and
    ///   `--api-key-file`, a header given twice, or a `--base-url` with `user:password@` in it.
    package static func resolve(
        _ options: inout SoakRunOptions, files: RunSecretFiles, environment: [String: String]
    ) throws {
        if let url = options.baseURL, url.user != nil || url.password != nil {
            throw SoakUsageError(
                message: "--base-url: holds credentials (user:password@), which would show in ps and in the "
                    + "report; drop them and send them as a header from --header-file (e.g. Proxy-Authorization)")
        }
        if let path = files.apiKey {
            guard options.baseURL != nil else {
                throw SoakUsageError(
                    message: "--api-key-file: only with --base-url (the embedded emulator uses its fixtures)")
            }
            guard !options.apiKeyOnCommandLine else {
                throw SoakUsageError(
                    message: "--api-key and --api-key-file: choose one (the file keeps the key out of ps)")
            }
            options.apiKey = try secret(inFile: path, flag: "--api-key-file")
        }
        // The environment speaks for a remote backend only: the embedded emulator has its own keys.
        if options.baseURL != nil {
            if options.apiKey == nil, let key = value(apiKeyVariable, environment) { options.apiKey = key }
            if options.orgKey == nil, let org = value(orgKeyVariable, environment) { options.orgKey = org }
        }
        // A header name given twice, by one source or by two, is refused with both sources named:
        // which of two tokens a proxy should see is not the tool's to guess.
        var sourced = options.headers.map { (header: $0, source: "--header") }
        if let path = files.headers { sourced += try Self.headers(inFile: path).map { ($0, "--header-file") } }
        if let text = environment[headersVariable] {
            sourced += try Self.headers(in: text, source: headersVariable).map { ($0, headersVariable) }
        }
        var seen: [String: String] = [:]
        for (header, source) in sourced {
            if let first = seen.updateValue(source, forKey: header.name.lowercased()) {
                let by = first == source ? "twice by \(source)" : "by \(first) and by \(source)"
                throw SoakUsageError(message: "--header \(header.name): given twice (\(by)); give each header once")
            }
        }
        options.headers = sourced.map(\.header)
        if let path = files.adminToken {
            options.adminToken = try secret(inFile: path, flag: "--admin-token-file")
        } else if let token = value(adminTokenVariable, environment) {
            options.adminToken = token
        }
    }

    /// The admin token of `serve`: `--admin-token-file`, else ``adminTokenVariable``.
    /// - Throws: ``SoakUsageError`` for an unreadable, empty or multi-line file.
    package static func adminToken(file: String?, environment: [String: String]) throws -> String? {
        if let file { return try secret(inFile: file, flag: "--admin-token-file") }
        return value(adminTokenVariable, environment)
    }

    /// `environment[name]` trimmed, or nil when unset or blank.
    private static func value(_ name: String, _ environment: [String: String]) -> String? {
        let text = environment[name]?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return text.isEmpty ? nil : text
    }

    private static func contents(of path: String, flag: String) throws -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw SoakUsageError(message: "\(flag) \(path): no such file")
        }
        guard !isDirectory.boolValue else {
            throw SoakUsageError(message: "\(flag) \(path): is a directory, not a file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SoakUsageError(message: "\(flag) \(path): cannot read it (permission denied?)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw SoakUsageError(message: "\(flag) \(path): is not UTF-8 text")
        }
        return text
    }
}
