import Foundation

/// A value guarded by an `NSLock` (the SDK's stand-in for `Mutex`, which needs iOS 18).
///
/// `@unchecked Sendable` is sound here: the only stored mutable state is `value`, it is
/// private, and every read or write of it happens inside `withLock`, which holds `lock`
/// for the whole closure. `Value: Sendable` keeps anything that escapes the closure safe
/// to share. The closure must not call back into the same box (NSLock is not recursive).
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
