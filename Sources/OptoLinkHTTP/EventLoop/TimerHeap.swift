/// A binary min-heap of deadlines (monotonic nanoseconds) for one event loop.
///
/// Ties are broken by insertion order, so two timers with the same deadline fire in the order
/// they were scheduled. Cancellation is lazy: the loop checks on pop whether an entry still applies.
struct TimerHeap<Payload> {
    struct Entry {
        var deadline: UInt64
        var sequence: UInt64
        var payload: Payload
    }

    private var entries: [Entry] = []
    private var nextSequence: UInt64 = 0

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// The earliest deadline, or `nil` when empty.
    var nextDeadline: UInt64? { entries.first?.deadline }

    mutating func schedule(at deadline: UInt64, _ payload: Payload) {
        entries.append(Entry(deadline: deadline, sequence: nextSequence, payload: payload))
        nextSequence &+= 1
        siftUp(entries.count - 1)
    }

    /// Removes and returns the earliest entry if its deadline is at or before `now`.
    mutating func popDue(now: UInt64) -> Entry? {
        guard let first = entries.first, first.deadline <= now else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            siftDown(0)
        }
        return first
    }

    mutating func removeAll() { entries.removeAll() }

    private func less(_ a: Int, _ b: Int) -> Bool {
        let x = entries[a]
        let y = entries[b]
        return x.deadline < y.deadline || (x.deadline == y.deadline && x.sequence < y.sequence)
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(child, parent) else { return }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
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
