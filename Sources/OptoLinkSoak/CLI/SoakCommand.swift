/// A parsed `optolink-soak` command line.
package enum SoakCommand: Sendable, Equatable {
    /// Print this help text and exit 0.
    case help(String)
    case version
    /// One of ``SoakCommandLine/subcommands`` with its options.
    case subcommand(any SoakSubcommand)

    /// The subcommand when it is a `C`, else `nil`.
    package func subcommand<C: SoakSubcommand>(_ type: C.Type) -> C? {
        guard case .subcommand(let command) = self else { return nil }
        return command as? C
    }

    package static func == (lhs: SoakCommand, rhs: SoakCommand) -> Bool {
        switch (lhs, rhs) {
        case (.help(let a), .help(let b)): a == b
        case (.version, .version): true
        case (.subcommand(let a), .subcommand(let b)): a.isEqual(to: b)
        default: false
        }
    }
}
