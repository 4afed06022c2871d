import Foundation

/// SKELETON placeholder: an in-memory ``OptoLinkKeyValueStore``.
public final class InMemoryKeyValueStore: OptoLinkKeyValueStore {
    public init() {}
    public func string(forKey key: String) -> String? { nil }
    public func setString(_ value: String?, forKey key: String) {}
    public func bool(forKey key: String) -> Bool { false }
    public func setBool(_ value: Bool, forKey key: String) {}
    public func removeAll() {}
}

/// SKELETON placeholder: an in-memory ``OptoLinkPasteboard``.
public final class InMemoryPasteboard: OptoLinkPasteboard {
    public init(_ initial: String? = nil) {}
    public func string() -> String? { nil }
    public func clear() {}
}
