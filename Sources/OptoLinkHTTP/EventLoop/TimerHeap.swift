/// A binary min-heap of deadlines (monotonic nanoseconds) for one event loop.
///
/// Ties are broken by insertion order, so two timers with the same deadline fire in the order
/// they were scheduled. Cancellation is lazy: the loop checks on pop whether an entry still applies.
/// `package` and inlinable for the soak driver's pacing executor, so its use is specialized there
/// as it is in this module.
package struct TimerHeap<Payload> {
    package struct Entry {
        package var deadline: UInt64
        package var sequence: UInt64
        package var payload: Payload

        @inlinable
        init(deadline: UInt64, sequence: UInt64, payload: Payload) {
            self.deadline = deadline
            self.sequence = sequence
            self.payload = payload
        }
    }

    @usableFromInline var entries: [Entry] = []
    @usableFromInline var nextSequence: UInt64 = 0

    @inlinable package init() {}

    @inlinable package var isEmpty: Bool { entries.isEmpty }
    @inlinable package var count: Int { entries.count }

    /// The earliest deadline, or `nil` when empty.
    @inlinable package var nextDeadline: UInt64? { entries.first?.deadline }

    @inlinable
    package mutating func schedule(at deadline: UInt64, _ payload: Payload) {
        entries.append(Entry(deadline: deadline, sequence: nextSequence, payload: payload))
        nextSequence &+= 1
        siftUp(entries.count - 1)
    }

    /// Removes and returns the earliest entry if its deadline is at or before `now`.
    @inlinable
    package mutating func popDue(now: UInt64) -> Entry? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            siftDown(0)
        }
        return first
    }

    @inlinable package mutating func removeAll() { entries.removeAll() }

    @inlinable
    func less(_ a: Int, _ b: Int) -> Bool {
        let x = entries[a]
        let y = entries[b]
        return x.deadline < y.deadline || (x.deadline == y.deadline && x.sequence < y.sequence)
    }

    @inlinable
    mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(child, parent) else { return }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    @inlinable
    mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count, less(left, smallest) { smallest = left }
            if right < entries.count, less(right, smallest) { smallest = right }
            guard smallest != parent else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
