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

    /// The string stored under `key`, or `nil` (docs/CONTRACT.md §3, the key-value store seam).
    public func string(forKey key: String) -> String? {
        entries.withLock { $0.strings[key] }
    }

    /// Stores `value` under `key`; `nil` removes the key.
    public func setString(_ value: String?, forKey key: String) {
        entries.withLock { $0.strings[key] = value }
    }

    /// The boolean stored under `key`; `false` when it was never set.
    public func bool(forKey key: String) -> Bool {
        entries.withLock { $0.bools[key] ?? false }
    }

    /// Stores `value` under `key`.
    public func setBool(_ value: Bool, forKey key: String) {
        entries.withLock { $0.bools[key] = value }
    }

    /// Forgets every string and boolean: the next ``OptoLink`` over this store is a fresh install
    /// (a new `deviceId` and a first launch; docs/CONTRACT.md §2, "Decisions").
    public func removeAll() {
        entries.withLock { $0 = Entries() }
    }
}
