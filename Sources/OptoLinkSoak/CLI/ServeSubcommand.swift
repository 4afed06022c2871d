import Foundation

/// Options of `serve`: the emulator on `host:port`. `nil` host/port: the `--config` file's
/// value when it has one, else `127.0.0.1` / `8080`.
package struct ServeOptions: Sendable, Equatable {
    package var host: String?
    package var port: Int?
    package var configPath: String?
    package var trustForwardedFor = false
    /// `--ledger-file PATH`: stream the ledger there as JSON lines instead of holding it in memory.
    package var ledgerFilePath: String?
    /// `--admin-token-file FILE`: the token `/__admin/*` requests must carry.
    package var adminTokenFile: String?
    /// `--show-keys`: the banner prints the fixture API keys whole instead of redacted.
    package var showKeys = false
    package init() {}
}

/// `optolink-soak serve [options]`: the staging emulator in the foreground (``ServeCommand``).
package struct ServeSubcommand: SoakSubcommand {
    package static let name = "serve"
    package static let synopsis = (arguments: "[options]", purpose: "run the staging emulator in the foreground")

    package var options: ServeOptions

    package static let usage = """
        USAGE: optolink-soak serve [options]

        Runs the staging emulator until Ctrl-C (default fixtures: org acme, key opl_sdk_test_acme_client).

        OPTIONS:
          --port N               port (default: the config's port, else 8080; 0 = any free port)
          --host H               address to bind (default: the config's host, else 127.0.0.1)
          --config FILE          StagingConfiguration JSON (port, limits, windows, faults, fixtures;
                                 see Profiles/staging/README.md); unknown keys are errors
          --trust-forwarded-for  take the client IP from X-Forwarded-For
          --ledger-file PATH     stream the ledger to PATH as JSON lines (one entry per line)
                                 instead of keeping it in memory; GET /__admin/ledger pages it
          --admin-token-file FILE
                                 every /__admin/* route then needs Authorization: Bearer
                                 <token>, the token being FILE's one line (else OPTOLINK_ADMIN_TOKEN).
                                 Required when --host is not a loopback address (127.0.0.0/8, ::1)
          --show-keys            print the fixture API keys whole in the banner (default: redacted
                                 as opl_sdk_test_…; the keys are the fixtures of --config FILE, else
                                 the defaults in Profiles/staging/README.md)
          -h, --help             this help
        """

    package init(arguments: [String]) throws {
        var options = ServeOptions()
        try FlagParser.walk(arguments, positional: FlagParser.noPositional(Self.name)) { flag, value in
            switch flag {
            case "--port": options.port = try FlagParser.number(flag, value(), 0...65535, "a port (0…65535)")
            case "--host": options.host = try value()
            case "--config": options.configPath = try value()
            case "--trust-forwarded-for": options.trustForwardedFor = true
            case "--ledger-file": options.ledgerFilePath = try value()
            case "--admin-token-file": options.adminTokenFile = try value()
            case "--show-keys": options.showKeys = true
            default: return false
            }
            return true
        }
        self.options = options
    }

    package func execute() async -> Int32 {
        await ServeCommand.run(options)
    }
}
