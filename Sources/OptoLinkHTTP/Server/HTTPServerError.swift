#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why ``HTTPServer/start()`` could not bring the server up.
package enum HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `host` is not an IPv4/IPv6 literal or `localhost`.
    case invalidHost(String)
    /// `port` is outside 0...65535, `loopCount` < 1, or `maxConnections` < 1.
    case invalidConfiguration(String)
    /// A system call failed: which one, and `errno` (e.g. `bind` with EADDRINUSE = 98).
    case systemCall(String, errno: Int32)
    /// ``HTTPServer/start()`` was called twice, or after ``HTTPServer/shutdown()``.
    case alreadyStarted

    /// A short, value-free label usable as a metric or report key.
    package var shortDescription: String {
        switch self {
        case .invalidHost: "invalid_host"
        case .invalidConfiguration: "invalid_configuration"
        case .systemCall(let call, _): "\(call)_failed"
        case .alreadyStarted: "already_started"
        }
    }

    /// A sentence naming the cause, with `strerror` text for system calls.
    package var description: String {
        switch self {
        case .invalidHost(let host): "invalid host \"\(host)\" (expected an IP literal or localhost)"
        case .invalidConfiguration(let why): "invalid server configuration: \(why)"
        case .systemCall(let call, let code): "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .alreadyStarted: "the server was already started"
        }
    }
}
