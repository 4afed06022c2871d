import Foundation

/// A value behind an `NSLock` (this target also builds for iOS 15, where `Mutex` is absent).
///
/// `@unchecked Sendable` is sound: `value` is private and only touched inside `withLock`,
/// which holds `lock` for the whole closure; `Value: Sendable` keeps what escapes safe.
final class TestLock<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
