import Foundation

/// An ``OptoLinkKeyValueStore`` that lives in memory: the Linux default, and one per
/// virtual device in tests and the soak tester. A "relaunch" is a new ``OptoLink`` over
/// the same store object. Thread-safe.
public final class InMemoryKeyValueStore: OptoLinkKeyValueStore {
    private struct Entries: Sendable {
        var strings: [String: String] = [:]
        var bools: [String: Bool] = [:]
    }

    private let entries = LockedBox(Entries())

    /// Creates an empty store (a fresh install).
    public init() {}

    public func string(forKey key: String) -> String? {
        entries.withLock { $0.strings[key] }
    }

    public func setString(_ value: String?, forKey key: String) {
        entries.withLock { $0.strings[key] = value }
    }

    public func bool(forKey key: String) -> Bool {
        entries.withLock { $0.bools[key] ?? false }
    }

    public func setBool(_ value: Bool, forKey key: String) {
        entries.withLock { $0.bools[key] = value }
    }

    public func removeAll() {
        entries.withLock { $0 = Entries() }
    }
}
