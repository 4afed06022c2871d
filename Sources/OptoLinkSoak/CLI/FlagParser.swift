import Foundation

/// A command line that cannot be used (exit code 2), with a message naming the flag.
package struct SoakUsageError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package var description: String { message }

    package init(message: String) { self.message = message }
}

/// `-h` or `--help` among a subcommand's arguments: the caller prints that subcommand's help.
struct HelpRequested: Error {}

/// The flag parsing every subcommand shares (hand-rolled: the package has no dependencies):
/// `--flag value`, `--flag=value`, positional arguments, and numbers checked against a range.
enum FlagParser {
    /// Walks `args`, calling `handle(flag, next)` for each flag (`next()` takes its value) and
    /// `positional` for each other argument.
    /// - Throws: ``HelpRequested`` at `-h`/`--help`; ``SoakUsageError`` for a flag `handle`
    ///   does not know (it returns `false`) or a missing value; whatever the closures throw.
    static func walk(
        _ args: [String], positional: (String) throws -> Void,
        _ handle: (String, () throws -> String) throws -> Bool
    ) throws {
        var i = 0
        while i < args.count {
            let arg = args[i]
            if arg == "-h" || arg == "--help" { throw HelpRequested() }
            guard arg.hasPrefix("-") else {
                try positional(arg)
                i += 1
                continue
            }
            var flag = arg
            var inline: String? = nil
            if let eq = arg.firstIndex(of: "="), arg.hasPrefix("--") {
                flag = String(arg[..<eq])
                inline = String(arg[arg.index(after: eq)...])
            }
            var consumed = false
            let next: () throws -> String = {
                if let inline { return inline }
                guard i + 1 < args.count, !looksLikeFlag(args[i + 1]) else {
                    throw SoakUsageError(message: "\(flag): needs a value")
                }
                consumed = true
                return args[i + 1]
            }
            guard try handle(flag, next) else { throw SoakUsageError(message: "\(flag): unknown option") }
            i += consumed ? 2 : 1
        }
    }

    /// `--out`, `-h`: an option, not a value (`-1` is a value, so `number` can reject it by name).
    private static func looksLikeFlag(_ text: String) -> Bool {
        text.hasPrefix("--") || (text.count >= 2 && text.hasPrefix("-") && text.dropFirst().first?.isLetter == true)
    }

    /// `text` as a number in `range`.
    /// - Throws: ``SoakUsageError`` `<flag>: "<text>" is not <what>`.
    static func number<T: LosslessStringConvertible & Comparable>(
        _ flag: String, _ text: String, _ range: ClosedRange<T>, _ what: String
    ) throws -> T {
        guard let value = T(text), range.contains(value) else {
            throw SoakUsageError(message: "\(flag): \"\(text)\" is not \(what)")
        }
        return value
    }

    /// `--transport KIND`: `native` or `urlsession`.
    static func transport(_ text: String) throws -> SoakTransportKind {
        guard let kind = SoakTransportKind(rawValue: text) else {
            throw SoakUsageError(message: "--transport: \"\(text)\" is not native or urlsession")
        }
        return kind
    }

    /// A subcommand that takes no positional argument refuses one.
    static func noPositional(_ command: String) -> (String) throws -> Void {
        { throw SoakUsageError(message: "\(command): unexpected argument \"\($0)\"") }
    }
}
