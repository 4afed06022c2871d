import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The source addresses of `run --local-ips LIST` (or the profile's `devices.localIPs`): LIST
/// is comma-separated items, each an address (`127.0.0.2`, `::1`), an inclusive range
/// (`127.0.0.2-127.0.0.61`, `fd00::1-fd00::ff`) or a CIDR block (`127.0.1.0/24`, `fd00::/120`),
/// IPv4 and IPv6 mixed. The pool is the items' addresses in the order written, duplicates once.
/// An IPv4 block of /30 or wider leaves out its network and broadcast addresses.
package struct LocalAddressPool: Sendable, Equatable {
    /// The most addresses a pool may hold (a /16 of IPv4); a larger list is refused.
    package static let capacity = 65_536

    /// The list as given.
    package let text: String
    /// Every address, numeric, IPv6 without brackets, in order.
    package let addresses: [String]

    /// Parses `text`.
    ///
    /// - Parameter source: how the user gave it, for the message (`--local-ips`, `devices.localIPs`).
    /// - Throws: ``SoakProfileError`` naming the item and the problem: not an address, a range
    ///   whose ends differ in IP version or run backwards, a bad prefix length, more than
    ///   ``capacity`` addresses, or an empty list.
    package static func parse(_ text: String, source: String = "--local-ips") throws -> LocalAddressPool {
        var addresses: [String] = []
        var seen = Set<String>()
        for rawItem in text.split(separator: ",", omittingEmptySubsequences: false) {
            let item = rawItem.trimmingCharacters(in: .whitespaces)
            guard !item.isEmpty else {
                throw SoakProfileError(message: "\(source): an empty item in \"\(text)\" (comma-separated addresses)")
            }
            let expanded: [IPAddress]
            do {
                expanded = try Self.expand(item, room: capacity - addresses.count)
            } catch let problem as Problem {
                throw SoakProfileError(message: "\(source): \(item): \(problem.text)")
            }
            for address in expanded {
                let textual = address.description
                if seen.insert(textual).inserted { addresses.append(textual) }
            }
        }
        return LocalAddressPool(text: text, addresses: addresses)
    }

    private init(text: String, addresses: [String]) {
        self.text = text
        self.addresses = addresses
    }

    private struct Problem: Error {
        var text: String
    }

    private static func expand(_ item: String, room: Int) throws -> [IPAddress] {
        let tooMany = Problem(text: "more than \(capacity) addresses in the list")
        if let slash = item.firstIndex(of: "/") {
            guard let base = IPAddress(String(item[..<slash])) else { throw Problem(text: "not an IP address") }
            let width = base.bytes.count * 8
            guard let prefix = Int(item[item.index(after: slash)...]), (0...width).contains(prefix) else {
                throw Problem(text: "the prefix length must be 0…\(width)")
            }
            let hostBits = width - prefix
            guard hostBits < 17, 1 << hostBits <= room else { throw tooMany }
            var first = base.masked(prefix: prefix)
            var count = 1 << hostBits
            if base.bytes.count == 4, hostBits >= 2 {
                first = first.advanced(by: 1)
                count -= 2
            }
            return (0..<count).map { first.advanced(by: $0) }
        }
        if let dash = item.firstIndex(of: "-") {
            guard let low = IPAddress(String(item[..<dash])),
                let high = IPAddress(String(item[item.index(after: dash)...]))
            else { throw Problem(text: "not a range of two IP addresses (FIRST-LAST)") }
            guard low.bytes.count == high.bytes.count else {
                throw Problem(text: "a range's two ends must both be IPv4 or both IPv6")
            }
            guard low <= high else { throw Problem(text: "the range runs backwards (the first address is higher)") }
            guard let span = low.distance(to: high), span < room else { throw tooMany }
            var result: [IPAddress] = [low]
            var current = low
            while current != high {
                guard result.count < room else { throw tooMany }
                current = current.advanced(by: 1)
                result.append(current)
            }
            return result
        }
        guard let single = IPAddress(item) else { throw Problem(text: "not an IP address") }
        guard room >= 1 else { throw tooMany }
        return [single]
    }
}

/// An IPv4 (4 bytes) or IPv6 (16 bytes) address, big-endian, for counting through ranges.
private struct IPAddress: Comparable, CustomStringConvertible {
    var bytes: [UInt8]

    init?(_ text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        bytes = withUnsafeBytes(of: &v6) { Array($0) }
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    /// The address `offset` further on (wrapping at the top of the address space).
    func advanced(by offset: Int) -> IPAddress {
        var result = bytes
        var carry = offset
        var index = result.count - 1
        while carry > 0, index >= 0 {
            let sum = Int(result[index]) + (carry & 0xFF)
            result[index] = UInt8(sum & 0xFF)
            carry = (carry >> 8) + (sum >> 8)
            index -= 1
        }
        return IPAddress(bytes: result)
    }

    /// How many addresses `other` (not lower) is past this one, or `nil` beyond 2^32.
    func distance(to other: IPAddress) -> Int? {
        var value = 0
        for index in bytes.indices {
            value = value * 256 + Int(other.bytes[index]) - Int(bytes[index])
            // Each further byte multiplies the gap by 256; it can shrink it by less than 256.
            if abs(value) > 1 << 40 { return nil }
        }
        return value <= Int(UInt32.max) ? value : nil
    }

    /// The address with every bit after the first `prefix` cleared.
    func masked(prefix: Int) -> IPAddress {
        var result = bytes
        for index in result.indices {
            let kept = Swift.max(0, Swift.min(8, prefix - index * 8))
            result[index] &= kept == 0 ? 0 : ~UInt8(0) << (8 - kept)
        }
        return IPAddress(bytes: result)
    }

    static func < (lhs: IPAddress, rhs: IPAddress) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    var description: String {
        var buffer = [CChar](repeating: 0, count: 64)
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        _ = bytes.withUnsafeBytes { raw in inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) }
        let text = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: text, as: UTF8.self)
    }
}
