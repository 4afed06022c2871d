import CEpoll

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Creating, binding and describing TCP sockets (IPv4 and IPv6).
package enum ListeningSocket {
    /// Fails with EADDRINUSE when anything listens on `host:port` already, whatever its options.
    ///
    /// Loops share a port through `SO_REUSEPORT`, which would just as well let a second server
    /// (same user, also `SO_REUSEPORT`) join a port in use and silently take half its connections.
    /// A plain bind (`SO_REUSEADDR` only, which Linux never lets share a listening port) rules that
    /// out before the real listeners bind. Port 0 needs no probe: the kernel never hands out a port
    /// that is in use, reuse options or not.
    ///
    /// - Throws: ``HTTPServerError/systemCall(_:errno:)`` (`bind`, EADDRINUSE) when the port is taken.
    static func probeFree(host: String, port: Int, portable: Bool) throws {
        let probe = try open(
            host: host, port: port, reusePort: false, backlog: 0, portable: portable, listening: false)
        close(probe.fd)
    }

    /// A bound, listening, non-blocking socket and the port it got; `portable` makes it with the
    /// POSIX twin of Linux's `socket(SOCK_NONBLOCK | SOCK_CLOEXEC)`.
    ///
    /// - Throws: ``HTTPServerError/invalidHost(_:)`` for an unparsable host,
    ///   ``HTTPServerError/systemCall(_:errno:)`` when socket/bind/listen fails (e.g. EADDRINUSE).
    package static func open(
        host: String, port: Int, reusePort: Bool, backlog: Int, portable: Bool, listening: Bool = true
    ) throws -> (fd: Int32, port: Int) {
        var storage = sockaddr_storage()
        let length = try fill(&storage, host: host, port: port)
        let family = Int32(storage.ss_family)
        let fd = cepoll_stream_socket(family, portable ? 1 : 0)
        guard fd >= 0 else { throw HTTPServerError.systemCall("socket", errno: cepoll_errno()) }
        do {
            _ = cepoll_enable_option(fd, CEPOLL_SOL_SOCKET, CEPOLL_SO_REUSEADDR)
            if reusePort, cepoll_enable_option(fd, CEPOLL_SOL_SOCKET, CEPOLL_SO_REUSEPORT) != 0 {
                throw HTTPServerError.systemCall("setsockopt(SO_REUSEPORT)", errno: cepoll_errno())
            }
            if family == AF_INET6 { _ = cepoll_enable_option(fd, CEPOLL_IPPROTO_IPV6, CEPOLL_IPV6_V6ONLY) }
            let bound = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
            }
            guard bound == 0 else { throw HTTPServerError.systemCall("bind", errno: cepoll_errno()) }
            guard !listening || listen(fd, Int32(clamping: backlog)) == 0 else {
                throw HTTPServerError.systemCall("listen", errno: cepoll_errno())
            }
            var local = sockaddr_storage()
            var localLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let named = withUnsafeMutablePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &localLength) }
            }
            guard named == 0 else { throw HTTPServerError.systemCall("getsockname", errno: cepoll_errno()) }
            return (fd, describe(local).port)
        } catch {
            close(fd)
            throw error
        }
    }

    /// Writes `host:port` into `storage`; returns the address length.
    package static func fill(_ storage: inout sockaddr_storage, host: String, port: Int) throws -> socklen_t {
        let literal = host == "localhost" ? "127.0.0.1" : host
        let bracketless =
            literal.hasPrefix("[") && literal.hasSuffix("]") ? String(literal.dropFirst().dropLast()) : literal
        let netPort = in_port_t(UInt16(port).bigEndian)
        return try withUnsafeMutablePointer(to: &storage) { raw in
            var v4 = in_addr()
            if inet_pton(AF_INET, bracketless, &v4) == 1 {
                return raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                    sin.pointee.sin_family = sa_family_t(AF_INET)
                    sin.pointee.sin_port = netPort
                    sin.pointee.sin_addr = v4
                    return socklen_t(MemoryLayout<sockaddr_in>.size)
                }
            }
            var v6 = in6_addr()
            if inet_pton(AF_INET6, bracketless, &v6) == 1 {
                return raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                    sin6.pointee.sin6_family = sa_family_t(AF_INET6)
                    sin6.pointee.sin6_port = netPort
                    sin6.pointee.sin6_addr = v6
                    return socklen_t(MemoryLayout<sockaddr_in6>.size)
                }
            }
            throw HTTPServerError.invalidHost(host)
        }
    }

    /// The textual IP and port of an IPv4 or IPv6 socket address.
    package static func describe(_ storage: sockaddr_storage) -> (address: String, port: Int) {
        var copy = storage
        return withUnsafePointer(to: &copy) { raw -> (String, Int) in
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            switch Int32(storage.ss_family) {
            case AF_INET:
                return raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                    var addr = sin.pointee.sin_addr
                    inet_ntop(AF_INET, &addr, &text, socklen_t(text.count))
                    return (Self.string(text), Int(UInt16(bigEndian: sin.pointee.sin_port)))
                }
            case AF_INET6:
                return raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                    var addr = sin6.pointee.sin6_addr
                    inet_ntop(AF_INET6, &addr, &text, socklen_t(text.count))
                    return (Self.string(text), Int(UInt16(bigEndian: sin6.pointee.sin6_port)))
                }
            default:
                return ("", 0)
            }
        }
    }

    private static func string(_ cString: [CChar]) -> String {
        let bytes = cString.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
