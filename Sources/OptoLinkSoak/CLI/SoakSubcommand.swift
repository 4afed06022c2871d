/// One `optolink-soak` subcommand's command-line face: its name, its line in the overall help,
/// its `--help` text, its flag parsing, and the call into the library that runs it.
///
/// A new subcommand is one file in this folder with a type conforming to this protocol, plus
/// its line in ``SoakCommandLine/subcommands``.
package protocol SoakSubcommand: Sendable, Equatable {
    /// The word that selects it: `optolink-soak <name> …`.
    static var name: String { get }
    /// Its line in `optolink-soak --help`: the arguments after the name, and what it does.
    static var synopsis: (arguments: String, purpose: String) { get }
    /// What `optolink-soak <name> --help` prints.
    static var usage: String { get }
    /// Parses the arguments after the name.
    /// - Throws: ``SoakUsageError`` naming the flag and the problem; ``HelpRequested`` at `-h`.
    init(arguments: [String]) throws
    /// Runs it; returns the process exit code.
    func execute() async -> Int32
}

extension SoakSubcommand {
    /// The command `arguments` (after the name) ask for: this subcommand with its options, or
    /// its help when they hold `-h`/`--help` before any bad flag.
    /// - Throws: ``SoakUsageError``.
    static func command(_ arguments: [String]) throws -> SoakCommand {
        do {
            return .subcommand(try Self(arguments: arguments))
        } catch is HelpRequested {
            return .help(usage)
        }
    }

    /// Whether `other` is the same subcommand with the same options.
    func isEqual(to other: any SoakSubcommand) -> Bool {
        (other as? Self) == self
    }
}
