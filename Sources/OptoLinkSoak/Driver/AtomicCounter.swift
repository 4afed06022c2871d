import Synchronization

/// A shareable integer counter (an `Atomic` in a class, so closures can capture it).
public final class AtomicCounter: Sendable {
    private let value = Atomic<Int>(0)

    public init() {}

    /// Adds `delta` and returns the new value.
    @discardableResult
    public func add(_ delta: Int = 1) -> Int { value.add(delta, ordering: .relaxed).newValue }

    public var current: Int { value.load(ordering: .relaxed) }
}
