import Foundation
import OptoLink

/// An `OptoLinkLogger` that keeps every line in memory (thread-safe).
public final class RecordingLogger: OptoLinkLogger {
    /// One logged line.
    public struct Entry: Sendable, Equatable {
        public var level: OptoLinkLogLevel
        public var message: String
        /// `String(describing:)` of the attached error, or `nil`.
        public var error: String?
        /// The attached error's `localizedDescription`, or `nil`.
        public var errorDescription: String?
    }

    private let state = TestLock<[Entry]>([])

    public init() {}

    public func log(level: OptoLinkLogLevel, _ message: String, error: (any Error)?) {
        let entry = Entry(
            level: level, message: message, error: error.map { String(describing: $0) },
            errorDescription: error.map { $0.localizedDescription })
        state.withLock { $0.append(entry) }
    }

    /// Every line so far, in order.
    public var entries: [Entry] { state.withLock { $0 } }

    /// Every message at `level`.
    public func messages(at level: OptoLinkLogLevel) -> [String] {
        entries.filter { $0.level == level }.map(\.message)
    }

    /// All logged text (messages and error renderings), one line per piece.
    public var allText: String {
        entries.flatMap { [$0.message, $0.error, $0.errorDescription].compactMap { $0 } }.joined(separator: "\n")
    }
}
