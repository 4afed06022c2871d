import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking loopback TCP client for hostile-input tests: sends raw bytes, reads until the
/// server closes or `timeout` seconds pass.
enum RawSocket {
    /// `ipv6` connects to `::1` instead of `127.0.0.1`.
    static func exchange(port: Int, _ payload: [UInt8], timeout: Int = 3, ipv6: Bool = false) -> String {
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let connected: Int32
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(UInt16(port).bigEndian)
            address.sin6_addr = in6addr_loopback
            connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard connected == 0 else { return "" }
        var sent = 0
        while sent < payload.count {
            let n = payload[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: received, as: UTF8.self)
    }
}

/// A blocking loopback TCP connection kept open across several exchanges (for connection-cap tests).
final class HeldSocket {
    let fd: Int32
    private var pending: [UInt8] = []

    /// Connects to 127.0.0.1:`port`; receives give up after `timeout` seconds.
    init(port: Int, timeout: Int = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HeldSocketError.system("socket", errno) }
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw HeldSocketError.system("connect", errno)
        }
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw HeldSocketError.system("send", errno) }
            sent += n
        }
    }

    /// One whole `Content-Length` response: the head (up to its blank line) and the body, as text.
    func readResponse() throws -> (head: String, body: String) {
        while true {
            if let end = pending.indices.dropLast(3).first(where: { pending[$0...$0 + 3] == [13, 10, 13, 10] }) {
                let head = String(decoding: pending[..<end], as: UTF8.self)
                let length =
                    head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingPrefix(" ")) } ?? 0
                if pending.count >= end + 4 + length {
                    let body = String(decoding: pending[(end + 4)..<(end + 4 + length)], as: UTF8.self)
                    pending.removeFirst(end + 4 + length)
                    return (head, body)
                }
            }
            guard try fill() else { throw HeldSocketError.closed }
        }
    }

    /// `true` when the server closed the connection cleanly (EOF) with nothing further to read.
    func closesWithNothingMore() -> Bool {
        (try? fill()) == false && pending.isEmpty
    }

    private func fill() throws -> Bool {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 {
            pending.append(contentsOf: buffer[0..<n])
            return true
        }
        if n == 0 { return false }
        throw HeldSocketError.system("recv", errno)
    }
}

enum HeldSocketError: Error, Equatable {
    case system(String, Int32)
    case closed
}
