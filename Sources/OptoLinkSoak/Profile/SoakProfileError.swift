import Foundation

/// A profile or flag that cannot be used, with a message naming the field and the problem
/// (`journeys[2].steps[0].kind: unknown step "clik" (expected one of …)`).
public struct SoakProfileError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The problem, naming the file or field path (`load.duration: must be > 0`).
    public var message: String
    /// Each problem on its own, `<field path>: <problem>`, in the order found; one entry for an
    /// error that is not about a field (an unreadable file).
    public var problems: [String]
    /// An error carrying `message` as written.
    public init(message: String) {
        self.message = message
        self.problems = [message]
    }

    /// Every problem a profile has, found in one pass: the message is the one problem, or
    /// `N problems:` followed by one indented line per problem.
    public init(problems: [String]) {
        self.problems = problems
        self.message =
            problems.count == 1
            ? problems[0] : "\(problems.count) problems:\n" + problems.map { "  \($0)" }.joined(separator: "\n")
    }
    /// The same as ``message``.
    public var description: String { message }
    /// The same as ``message``.
    public var errorDescription: String? { message }
}
