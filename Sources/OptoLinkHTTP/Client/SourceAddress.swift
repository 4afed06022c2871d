import CEpoll

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A local IP address an ``HTTPClient`` connection binds to before it connects
/// (``HTTPClientRequest/sourceAddress``), so the server sees that address as the peer: what
/// `optolink-soak run --local-ips` gives each virtual device.
///
/// On Linux all of 127.0.0.0/8 is local, so any 127.x.y.z binds without configuration; of IPv6
/// only `::1` is. The port is left to the kernel, chosen at `connect` time
/// (`IP_BIND_ADDRESS_NO_PORT` on Linux), so many connections from one address to different
/// servers do not each hold an ephemeral port from `bind` on.
package enum HTTPSourceAddress {
    /// `AF_INET` or `AF_INET6` for a numeric IPv4 or IPv6 address (no brackets), `nil` for anything else.
    package static func family(of address: String) -> Int32? {
        var storage = sockaddr_storage()
        guard (try? ListeningSocket.fill(&storage, host: address, port: 0)) != nil, address != "localhost" else {
            return nil
        }
        return Int32(storage.ss_family)
    }

    /// Why a socket cannot bind `address` on this machine, or `nil` when it can: the check a run
    /// makes for every address before it starts.
    ///
    /// - Returns: `nil`, or the reason in words with the `errno` text (`EADDRNOTAVAIL`: the
    ///   address is not on any interface here).
    package static func bindProblem(_ address: String) -> String? {
        guard let family = family(of: address) else { return "not a numeric IPv4 or IPv6 address" }
        let fd = cepoll_stream_socket(family, 1)
        guard fd >= 0 else { return "socket: \(String(cString: strerror(cepoll_errno())))" }
        defer { close(fd) }
        guard let code = bind(fd, to: address) else { return nil }
        if code == EADDRNOTAVAIL { return "not an address of this machine (\(String(cString: strerror(code))))" }
        return String(cString: strerror(code))
    }

    /// Binds the socket `fd` to `address` with port 0.
    ///
    /// - Returns: `nil` on success, else `errno`.
    static func bind(_ fd: Int32, to address: String) -> Int32? {
        var storage = sockaddr_storage()
        guard let length = try? ListeningSocket.fill(&storage, host: address, port: 0) else { return EINVAL }
        #if os(Linux)
            _ = cepoll_enable_option(fd, Int32(IPPROTO_IP), Self.bindAddressNoPort)
        #endif
        let rc = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #if canImport(Glibc)
                    Glibc.bind(fd, $0, length)
                #else
                    Darwin.bind(fd, $0, length)
                #endif
            }
        }
        return rc == 0 ? nil : cepoll_errno()
    }

    /// Linux's `IP_BIND_ADDRESS_NO_PORT` (linux/in.h; Glibc's module does not export it).
    private static var bindAddressNoPort: Int32 { 24 }
}
