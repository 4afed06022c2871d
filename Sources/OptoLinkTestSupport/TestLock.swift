import Foundation

/// A value behind a lock, for test doubles you write yourself (a custom transport, store or
/// pasteboard that records what the SDK did). `Mutex` needs iOS 18 / macOS 15; this works on the
/// SDK's whole platform floor.
///
/// ```swift
/// final class CountingStore: OptoLinkKeyValueStore {
///     private let writes = TestLock(0)
///     func setBool(_ value: Bool, forKey key: String) { writes.withLock { $0 += 1 } }
///     …
/// }
/// ```
///
/// `@unchecked Sendable` is sound: `value` is private and only touched inside `withLock`,
/// which holds `lock` for the whole closure; `Value: Sendable` keeps what escapes safe.
public final class TestLock<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// A lock guarding `value`.
    public init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value and returns what it returns. Do not await
    /// or call back into the same lock inside `body` (it is not reentrant).
    ///
    /// - Throws: whatever `body` throws (the lock is released first).
    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
