import CEpoll
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The socket addresses of each host and port an ``HTTPClient`` sends to, in the order a new
/// connection tries them.
///
/// - An IP literal is its one address; `localhost` is `127.0.0.1` then `::1`; a name is every
///   A and AAAA record `getaddrinfo` returns, in its order.
/// - Each request's list starts one address further than the last one's, so new connections
///   go round the records in turn; a connection that cannot be made tries the next one.
/// - An address whose connect failed is tried last for ``failurePause`` (the records that
///   answer come first), then takes its turn again.
/// - A name is resolved again, on the first request after ``Configuration/resolutionTTL``
///   (default 30 s: a DNS change reaches a long run within half a minute, at one
///   `getaddrinfo` per host per TTL); when that fails, the previous answer is kept until the
///   next try. Literals and `localhost` are never resolved again.
package final class AddressResolver: Sendable {
    /// How long an address whose connect failed goes to the back of the list.
    static let failurePause: Duration = .seconds(10)

    private struct HostPort: Hashable {
        var host: String
        var port: Int
    }

    private struct Entry {
        var addresses: [ClientAddress]
        /// Monotonic nanoseconds after which a name is resolved again (`UInt64.max`: never).
        var expires: UInt64
        /// Where the next request's list starts.
        var next = 0
    }

    /// Answers a host name with numeric addresses, in order (tests; `getaddrinfo` otherwise).
    package typealias LookUp = @Sendable (_ host: String) -> [String]

    private let ttl: UInt64
    private let overrides: [String: [String]]
    private let lookUp: LookUp?
    private let entries = Mutex<[HostPort: Entry]>([:])

    /// - Parameters:
    ///   - ttl: how long a name's answer is used before it is resolved again.
    ///   - overrides: host name → numeric addresses used instead of `getaddrinfo`, for good (tests).
    ///   - lookUp: answers names instead of `getaddrinfo`, again after each `ttl` (tests).
    package init(ttl: Duration, overrides: [String: [String]] = [:], lookUp: LookUp? = nil) {
        self.ttl = ttl.nanosecondsClamped
        self.overrides = overrides
        self.lookUp = lookUp
    }

    /// The addresses to try for a request to `host:port`, in order, of `family` only when given.
    ///
    /// - Throws: ``HTTPClientError/cannotResolve(host:)`` when the name has no address;
    ///   ``HTTPClientError/invalidRequest(_:)`` when none is of `family` (a source address of
    ///   the other IP version).
    package func addresses(host: String, port: Int, family: Int32? = nil) throws(HTTPClientError) -> [ClientAddress] {
        let key = HostPort(host: host, port: port)
        let now = cepoll_monotonic_ns()
        let cached = entries.withLock { entries -> [ClientAddress]? in
            guard var entry = entries[key] else { return nil }
            guard entry.expires > now else {
                // This request resolves it again; those arriving meanwhile keep the last answer.
                entry.expires = now &+ ttl
                entries[key] = entry
                return nil
            }
            guard entry.addresses.count > 1 else { return entry.addresses }
            let start = entry.next % entry.addresses.count
            entry.next = start + 1
            entries[key] = entry
            return Self.ordered(entry.addresses, from: start, now: now)
        }
        var list: [ClientAddress]
        if let cached {
            list = cached
        } else {
            list = try refresh(key, now: now)
        }
        guard let family else { return list }
        list.removeAll { $0.family != family }
        guard !list.isEmpty else {
            let version = family == AF_INET6 ? "IPv6" : "IPv4"
            throw .invalidRequest("\(host) has no \(version) address for an \(version) source address")
        }
        return list
    }

    /// Resolves `key` now and stores the answer; a failed re-resolution keeps the previous one.
    private func refresh(_ key: HostPort, now: UInt64) throws(HTTPClientError) -> [ClientAddress] {
        let resolved: [ClientAddress]
        let expires: UInt64
        if key.host.lowercased() == "localhost" {
            resolved = ["127.0.0.1", "::1"].compactMap { Self.numericAddress($0, port: key.port) }
            expires = .max
        } else if let numeric = Self.numericAddress(key.host, port: key.port) {
            resolved = [numeric]
            expires = .max
        } else if let override = overrides[key.host] {
            resolved = override.compactMap { Self.numericAddress($0, port: key.port) }
            expires = .max
        } else {
            let answer =
                lookUp.map { $0(key.host).compactMap { Self.numericAddress($0, port: key.port) } }
                ?? Self.systemLookUp(key.host, port: key.port)
            if answer.isEmpty, let previous = entries.withLock({ $0[key] }), !previous.addresses.isEmpty {
                entries.withLock { $0[key]?.expires = now &+ ttl }
                return previous.addresses
            }
            resolved = answer
            expires = now &+ ttl
        }
        guard !resolved.isEmpty else { throw .cannotResolve(host: key.host) }
        // Addresses kept across a re-resolution keep their failure marks.
        let merged = entries.withLock { entries -> [ClientAddress] in
            let old = entries[key]?.addresses ?? []
            let list = resolved.map { fresh in old.first { $0 == fresh } ?? fresh }
            entries[key] = Entry(addresses: list, expires: expires, next: list.count > 1 ? 1 : 0)
            return list
        }
        return Self.ordered(merged, from: 0, now: now)
    }

    /// `addresses` rotated to start at `start`, those in their failure pause moved to the end.
    private static func ordered(_ addresses: [ClientAddress], from start: Int, now: UInt64) -> [ClientAddress] {
        guard addresses.count > 1 else { return addresses }
        let rotated = Array(addresses[start...] + addresses[..<start])
        guard rotated.contains(where: { !$0.health.isAnswering(at: now) }) else { return rotated }
        return rotated.filter { $0.health.isAnswering(at: now) } + rotated.filter { !$0.health.isAnswering(at: now) }
    }

    /// Every distinct TCP address `getaddrinfo` gives for `host`, in its order; empty when none.
    private static func systemLookUp(_ host: String, port: Int) -> [ClientAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &result) == 0 else { return [] }
        defer { freeaddrinfo(result) }
        var resolved: [ClientAddress] = []
        var entry = result
        while let current = entry {
            if let sockaddr = current.pointee.ai_addr {
                let bytes = [UInt8](UnsafeRawBufferPointer(start: sockaddr, count: Int(current.pointee.ai_addrlen)))
                let address = ClientAddress(bytes: bytes, family: current.pointee.ai_family)
                if !resolved.contains(address) { resolved.append(address) }
            }
            entry = current.pointee.ai_next
        }
        return resolved
    }

    /// The address of a numeric IPv4 or IPv6 host, `nil` for a name.
    private static func numericAddress(_ host: String, port: Int) -> ClientAddress? {
        var storage = sockaddr_storage()
        guard host.lowercased() != "localhost", let length = try? ListeningSocket.fill(&storage, host: host, port: port)
        else { return nil }
        let bytes = withUnsafeBytes(of: &storage) { [UInt8]($0.prefix(Int(length))) }
        return ClientAddress(bytes: bytes, family: Int32(storage.ss_family))
    }
}

/// Whether connections to one resolved address are being made: shared by every request's
/// copy of the address, marked by the loop that connects.
package final class AddressHealth: Sendable {
    /// Monotonic nanoseconds until which the address is tried last (0: answering).
    private let pausedUntil = Atomic<UInt64>(0)

    /// A connect to the address failed at `now`: it goes to the back of the list for ``AddressResolver/failurePause``.
    package func connectFailed(at now: UInt64) {
        pausedUntil.store(now &+ AddressResolver.failurePause.nanosecondsClamped, ordering: .relaxed)
    }

    /// A connect to the address succeeded: it takes its turn again.
    package func connected() {
        if pausedUntil.load(ordering: .relaxed) != 0 { pausedUntil.store(0, ordering: .relaxed) }
    }

    func isAnswering(at now: UInt64) -> Bool { pausedUntil.load(ordering: .relaxed) <= now }
}
