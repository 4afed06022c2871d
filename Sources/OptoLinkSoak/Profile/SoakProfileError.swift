import Foundation

/// A profile or flag that cannot be used, with a message naming the field and the problem
/// (`journeys[2].steps[0].kind: unknown step "clik" (expected one of …)`).
public struct SoakProfileError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// The problem, naming the file or field path (`load.duration: must be > 0`).
    public var message: String
    /// An error carrying `message` as written.
    public init(message: String) { self.message = message }
    /// The same as ``message``.
    public var description: String { message }
    /// The same as ``message``.
    public var errorDescription: String? { message }
}
