#if canImport(Darwin)
    import Foundation

    /// The Apple-platform ``OptoLinkKeyValueStore``: the UserDefaults suite `optolink_sdk`
    /// (docs/CONTRACT.md §2, decision 3; privacy manifest reason CA92.1).
    ///
    /// `@unchecked Sendable` is sound: the only stored property is `defaults`, a `let` (never
    /// reassigned), and the `UserDefaults` it refers to is documented by Apple as thread-safe;
    /// `shared` is a `static let`. This type adds no mutable state of its own.
    final class UserDefaultsKeyValueStore: OptoLinkKeyValueStore, @unchecked Sendable {
        static let suiteName = "optolink_sdk"
        static let shared = UserDefaultsKeyValueStore()

        private let defaults: UserDefaults

        init() {
            defaults = UserDefaults(suiteName: Self.suiteName) ?? .standard
        }

        func string(forKey key: String) -> String? { defaults.string(forKey: key) }

        func setString(_ value: String?, forKey key: String) {
            if let value { defaults.set(value, forKey: key) } else { defaults.removeObject(forKey: key) }
        }

        func bool(forKey key: String) -> Bool { defaults.bool(forKey: key) }

        func setBool(_ value: Bool, forKey key: String) { defaults.set(value, forKey: key) }

        func removeAll() { defaults.removePersistentDomain(forName: Self.suiteName) }
    }
#endif
