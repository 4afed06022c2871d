import CEpoll

/// The portable backend: POSIX `poll(2)` over an array with one entry per registered descriptor.
///
/// Each wait hands the whole array to the kernel and scans it afterwards, so a wait costs
/// O(registered descriptors); fine for development machines and tests, not for 10k sockets (use
/// ``EpollPoller`` there). Registration changes are array writes, no system calls.
///
/// Hang-up is reported differently across kernels (macOS sets `POLLHUP` as soon as the peer
/// half-closes, Linux only once both directions are shut), so `POLLHUP` is delivered as whatever
/// the socket waits for (readable, else writable) and the following read or write tells the loop
/// what happened; `POLLERR`/`POLLNVAL` mean ``IOEvents/failed``. A descriptor with no interest is
/// stored negated, which `poll` skips, so a sticky hang-up cannot make the loop spin.
package final class PollPoller: ReadinessPoller {
    package static let usesPortableCalls = true
    /// At most this many ready entries per wait; the scan resumes where it stopped next time.
    private static let capacity = 256

    private var entries: [pollfd] = []
    /// The real descriptor of each entry (the entry's own `fd` is negated while it has no interest).
    private var fds: [Int32] = []
    private var tokens: [UInt64] = []
    private var interests: [IOEvents] = []
    /// Entry index by descriptor number; -1 when not registered.
    private var slotOf: [Int32] = []
    private var cursor = 0
    private var readyEvents = [IOEvents](repeating: [], count: capacity)
    private var readyTokens = [UInt64](repeating: 0, count: capacity)

    package init() {}

    package var descriptor: Int32? { nil }

    private static func pollMask(_ interest: IOEvents) -> Int16 {
        (interest.contains(.readable) ? CEPOLL_POLLIN : 0) | (interest.contains(.writable) ? CEPOLL_POLLOUT : 0)
    }

    private func slot(of fd: Int32) -> Int? {
        guard fd >= 0, Int(fd) < slotOf.count else { return nil }
        let slot = slotOf[Int(fd)]
        return slot >= 0 ? Int(slot) : nil
    }

    package func register(_ fd: Int32, interest: IOEvents, token: UInt64) -> Bool {
        guard fd >= 0 else { return false }
        if slot(of: fd) != nil {
            update(fd, interest: interest, token: token)
            return true
        }
        if Int(fd) >= slotOf.count {
            slotOf.append(contentsOf: repeatElement(-1, count: Int(fd) + 1 - slotOf.count))
        }
        slotOf[Int(fd)] = Int32(entries.count)
        entries.append(pollfd(fd: interest.isEmpty ? ~fd : fd, events: Self.pollMask(interest), revents: 0))
        fds.append(fd)
        tokens.append(token)
        interests.append(interest)
        return true
    }

    package func update(_ fd: Int32, interest: IOEvents, token: UInt64) {
        guard let slot = slot(of: fd) else { return }
        entries[slot].fd = interest.isEmpty ? ~fd : fd
        entries[slot].events = Self.pollMask(interest)
        tokens[slot] = token
        interests[slot] = interest
    }

    package func deregister(_ fd: Int32) {
        guard let slot = slot(of: fd) else { return }
        let last = entries.count - 1
        if slot != last {
            entries[slot] = entries[last]
            fds[slot] = fds[last]
            tokens[slot] = tokens[last]
            interests[slot] = interests[last]
            slotOf[Int(fds[slot])] = Int32(slot)
        }
        entries.removeLast()
        fds.removeLast()
        tokens.removeLast()
        interests.removeLast()
        slotOf[Int(fd)] = -1
    }

    package func willClose(_ fd: Int32) { deregister(fd) }

    package func wait(timeoutMilliseconds: Int32) -> Int {
        let count = entries.count
        let ready = entries.withUnsafeMutableBufferPointer {
            cepoll_poll($0.baseAddress, UInt32(count), timeoutMilliseconds)
        }
        guard ready > 0 else { return Int(ready) }
        if cursor >= count { cursor = 0 }
        var found = 0
        var index = cursor
        for _ in 0..<count {
            let revents = entries[index].revents
            if revents != 0 {
                readyEvents[found] = Self.events(revents, interest: interests[index])
                readyTokens[found] = tokens[index]
                found += 1
                if found == Int(ready) || found == Self.capacity {
                    cursor = index + 1  // whoever was not reached comes first next time
                    break
                }
            }
            index = index + 1 == count ? 0 : index + 1
        }
        return found
    }

    private static func events(_ revents: Int16, interest: IOEvents) -> IOEvents {
        if revents & (CEPOLL_POLLERR | CEPOLL_POLLNVAL) != 0 { return .failed }
        var events: IOEvents = []
        if revents & CEPOLL_POLLIN != 0 { events.insert(.readable) }
        if revents & CEPOLL_POLLOUT != 0 { events.insert(.writable) }
        if revents & CEPOLL_POLLHUP != 0, events.isEmpty {
            // Let the read (EOF, reset) or write (EPIPE) that follows say what the hang-up means.
            events = interest.contains(.readable) ? .readable : (interest.contains(.writable) ? .writable : .failed)
        }
        return events
    }

    package func ready(at index: Int) -> (events: IOEvents, token: UInt64) {
        (readyEvents[index], readyTokens[index])
    }
}
