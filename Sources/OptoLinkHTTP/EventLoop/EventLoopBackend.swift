import CEpoll

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How an event loop learns which sockets are ready: Linux's `epoll`, or POSIX `poll(2)`.
///
/// The platform default is fixed at compile time: ``epoll`` on Linux, ``poll`` everywhere else
/// (macOS). On Linux the environment variable `OPTOLINK_EVENT_LOOP=poll` forces the portable
/// backend, so the code macOS runs is exercised on Linux too; a configuration's
/// ``HTTPServer/Configuration/eventLoopBackend`` overrides both. The portable backend also uses
/// the portable twins of the Linux-only calls (`accept` + `fcntl` for `accept4`, a pipe for the
/// `eventfd` wake-up). See `docs/LINUX.md`, "Event loop backends".
package enum EventLoopBackend: String, Sendable, Equatable, CaseIterable {
    /// `epoll` (Linux only): one kernel wait returns only the ready sockets; cost per wait does not
    /// grow with the number of idle connections. The fast path.
    case epoll
    /// `poll(2)` (every POSIX system): each wait passes every registered socket to the kernel, so a
    /// wait costs O(open connections). Meant for development machines and tests, not 10k sockets.
    case poll

    /// The environment variable that overrides the platform default (`epoll` or `poll`).
    static let environmentVariable = "OPTOLINK_EVENT_LOOP"

    /// ``epoll`` on Linux, ``poll`` elsewhere; decided when the package is compiled.
    package static var platformDefault: EventLoopBackend {
        #if os(Linux)
            .epoll
        #else
            .poll
        #endif
    }

    /// Whether this build can run the backend (``poll`` always; ``epoll`` only on Linux).
    package var isAvailable: Bool {
        switch self {
        case .poll: true
        case .epoll: Self.platformDefault == .epoll
        }
    }

    /// The backend named by `OPTOLINK_EVENT_LOOP` in `environment`, or ``platformDefault`` when it
    /// is unset or empty.
    ///
    /// - Parameter environment: the process environment by default; a dictionary in tests.
    /// - Throws: ``HTTPServerError/invalidConfiguration(_:)`` naming the variable and its value when
    ///   the value is neither `epoll` nor `poll`, or names a backend this platform lacks.
    package static func resolve(environment: [String: String]? = nil) throws(HTTPServerError) -> EventLoopBackend {
        let value: String?
        if let environment {
            value = environment[environmentVariable]
        } else {
            value = getenv(environmentVariable).map { String(cString: $0) }
        }
        guard let value, !value.isEmpty else { return platformDefault }
        guard let backend = EventLoopBackend(rawValue: value.lowercased()) else {
            throw .invalidConfiguration(
                "\(environmentVariable)=\"\(value)\" names no event loop backend; expected \"epoll\" or \"poll\"")
        }
        guard backend.isAvailable else {
            throw .invalidConfiguration(
                "\(environmentVariable)=\"\(value)\": the \(backend.rawValue) backend is Linux-only; use \"poll\"")
        }
        return backend
    }
}
