import Synchronization

/// A shareable integer counter (an `Atomic` in a class, so closures can capture it).
package final class AtomicCounter: Sendable {
    private let value = Atomic<Int>(0)

    package init() {}

    /// Adds `delta` and returns the new value.
    @discardableResult
    package func add(_ delta: Int = 1) -> Int { value.add(delta, ordering: .relaxed).newValue }

    package var current: Int { value.load(ordering: .relaxed) }
}
