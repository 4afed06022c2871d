import Foundation

/// A profile or flag that cannot be used, with a message naming the field and the problem
/// (`journeys[2].steps[0].kind: unknown step "clik" (expected one of …)`).
public struct SoakProfileError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
    public var errorDescription: String? { message }
}
