import Testing

import OptoLinkSoak

/// The registration list is the command line: every subcommand on it is reached by its name,
/// answers `--help` with its own text and has its line in the overall help.
@Suite("Command line: the subcommand list")
struct SubcommandRegistryTests {
    @Test("every registered subcommand is reached by name and answers --help with its usage")
    func everySubcommandIsReachable() throws {
        let names = SoakCommandLine.subcommands.map { $0.name }
        #expect(names == ["run", "serve", "bench", "compare", "merge", "capacity"])
        #expect(Set(names).count == names.count, "two subcommands share a name")
        for command in SoakCommandLine.subcommands {
            #expect(try SoakCommandLine.parse([command.name, "--help"]) == .help(command.usage))
            #expect(command.usage.hasPrefix("USAGE: optolink-soak \(command.name) "))
            #expect(SoakCommandLine.usage.contains("optolink-soak \(command.name) \(command.synopsis.arguments)"))
            #expect(SoakCommandLine.usage.contains(command.synopsis.purpose))
        }
    }

    @Test("a help flag after a bad flag is too late; before it, help wins")
    func helpOnlyBeforeABadFlag() throws {
        #expect(try SoakCommandLine.parse(["merge", "-h", "--frobnicate"]) == .help(MergeSubcommand.usage))
        #expect(throws: SoakUsageError(message: "--frobnicate: unknown option")) {
            try SoakCommandLine.parse(["merge", "--frobnicate", "-h"])
        }
    }

    @Test("parsed subcommands compare by their options")
    func equality() throws {
        let a = try SoakCommandLine.parse(["serve", "--port", "1"])
        #expect(a == (try SoakCommandLine.parse(["serve", "--port=1"])))
        #expect(a != (try SoakCommandLine.parse(["serve", "--port", "2"])))
        #expect(a.subcommand(ServeSubcommand.self)?.options.port == 1)
        #expect(a.subcommand(RunSubcommand.self) == nil)
    }
}
