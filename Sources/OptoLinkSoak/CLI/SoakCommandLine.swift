/// Parses `optolink-soak` arguments: `--help`, `--version`, or one of ``subcommands``.
///
/// ```
/// optolink-soak run PROFILE [options]
/// optolink-soak serve | bench | compare | merge [options]
/// optolink-soak --version | --help | <command> --help
/// ```
package enum SoakCommandLine {
    /// Every subcommand, in the order `--help` lists them. A new subcommand is one file in this
    /// folder and one line here.
    package static let subcommands: [any SoakSubcommand.Type] = [
        RunSubcommand.self,
        ServeSubcommand.self,
        BenchSubcommand.self,
        CompareSubcommand.self,
        MergeSubcommand.self,
        CapacitySubcommand.self,
    ]

    package static let usage = """
        optolink-soak — load and rate-limit soak tester for the OptoLink SDK

        USAGE:
        \(subcommands.map(synopsisLine).joined(separator: "\n"))
          optolink-soak --version

        Run `optolink-soak <command> --help` for a command's options.
        Exit codes: 0 thresholds passed · 1 a threshold failed · 2 could not run ·
        130 interrupted (SIGINT/Ctrl-C) · 143 terminated (SIGTERM); both still write the report.
        summary.json "result" says the same in one word: passed, failed, invalid, interrupted, terminated.
        """

    /// Parses `arguments` (without the executable name).
    /// - Throws: ``SoakUsageError`` naming the flag and the problem.
    package static func parse(_ arguments: [String]) throws -> SoakCommand {
        guard let first = arguments.first else { return .help(usage) }
        switch first {
        case "-h", "--help", "help": return .help(usage)
        case "--version", "-V", "version": return .version
        default: break
        }
        guard let command = subcommands.first(where: { $0.name == first }) else {
            let expected = subcommands.map { $0.name } + ["--help", "--version"]
            throw SoakUsageError(
                message: "unknown command \"\(first)\" (expected \(expected.joined(separator: ", ")))")
        }
        return try command.command(Array(arguments.dropFirst()))
    }

    /// `  optolink-soak <name> <arguments>` with the purpose from column 40, or on the next line
    /// when the arguments reach that far.
    private static func synopsisLine(_ command: any SoakSubcommand.Type) -> String {
        let purposeColumn = 40
        let head = "  optolink-soak \(command.name) \(command.synopsis.arguments)"
        let gap =
            head.count + 2 <= purposeColumn
            ? String(repeating: " ", count: purposeColumn - head.count)
            : "\n" + String(repeating: " ", count: purposeColumn)
        return head + gap + command.synopsis.purpose
    }
}
