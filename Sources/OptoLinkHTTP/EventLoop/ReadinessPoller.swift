import CEpoll

/// What a connection waits for, or what a poller found, independent of any backend's bit values.
package struct IOEvents: OptionSet, Sendable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }
    package static let readable = IOEvents(rawValue: 1)
    package static let writable = IOEvents(rawValue: 2)
    /// An error or hang-up the loop should treat as "drop this socket now".
    package static let failed = IOEvents(rawValue: 4)
}

/// A readiness-notification mechanism one loop (``ServerLoop`` or ``ClientLoop``) drives from its own thread.
///
/// Level-triggered: a socket stays reported while it is ready. Registrations carry a 64-bit token
/// handed back with each readiness event. Implementations: ``EpollPoller`` (Linux) and
/// ``PollPoller`` (portable). The loop is generic over this protocol, so each backend's calls are
/// specialised and direct, not dynamic dispatch.
package protocol ReadinessPoller: AnyObject {
    /// Whether accept/socket/wake-up use the portable twins of the Linux-only calls.
    static var usesPortableCalls: Bool { get }
    /// The poller's own descriptor (an epoll set), which the loop releases last; nil if none.
    var descriptor: Int32? { get }
    /// Starts watching `fd` for `interest`; false (errno set) when the kernel refuses.
    func register(_ fd: Int32, interest: IOEvents, token: UInt64) -> Bool
    /// Replaces the interest (and token) of a registered descriptor.
    func update(_ fd: Int32, interest: IOEvents, token: UInt64)
    /// Stops watching `fd`, which stays open.
    func deregister(_ fd: Int32)
    /// Forgets `fd` just before the loop closes it (epoll drops closed descriptors by itself).
    func willClose(_ fd: Int32)
    /// Waits up to `timeoutMilliseconds` (-1: forever); the number of ready entries, or -1 with errno.
    func wait(timeoutMilliseconds: Int32) -> Int
    /// Entry `index` (below what ``wait(timeoutMilliseconds:)`` returned) of the last wait.
    func ready(at index: Int) -> (events: IOEvents, token: UInt64)
}

/// A loop's wake-up channel: an eventfd (both ends the same descriptor) or a pipe.
package struct Waker: Sendable {
    var readFD: Int32
    var writeFD: Int32

    /// Opens the channel the backend's call family uses.
    ///
    /// - Throws: ``HTTPServerError/systemCall(_:errno:)`` (`eventfd` or `pipe`) when it fails.
    package static func open(portable: Bool) throws(HTTPServerError) -> Waker {
        var readFD: Int32 = -1
        var writeFD: Int32 = -1
        guard cepoll_wake_open(portable ? 1 : 0, &readFD, &writeFD) == 0 else {
            throw .systemCall(portable ? "pipe" : "eventfd", errno: cepoll_errno())
        }
        return Waker(readFD: readFD, writeFD: writeFD)
    }

    package func signal() { cepoll_wake_signal(writeFD) }
    package func drain() { cepoll_wake_drain(readFD) }

    /// Each distinct descriptor once (an eventfd is one, a pipe two).
    package var descriptors: [Int32] { readFD == writeFD ? [readFD] : [readFD, writeFD] }
}
