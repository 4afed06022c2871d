import OptoLinkHTTP
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the blocking test client saw go wrong.
enum TestClientError: Error, Equatable {
    case system(String, Int32)
    /// The server closed the connection (EOF) before a whole response arrived.
    case closed
    /// The server reset the connection (ECONNRESET).
    case reset
    /// Nothing arrived within the receive timeout.
    case timedOut
    case malformed(String)
}

/// A parsed HTTP/1.1 response as the test client read it.
struct TestResponse {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// A tiny blocking POSIX client over one TCP connection, bounded by SO_RCVTIMEO/SO_SNDTIMEO.
final class TestClient {
    let fd: Int32
    private var pending: [UInt8] = []

    private let host: String
    private let port: Int

    /// A socket to `host:port`, connected at once unless `connectNow` is false (then call ``connect()``).
    init(host: String = "127.0.0.1", port: Int, timeoutSeconds: Int = 10, connectNow: Bool = true) throws {
        self.host = host
        self.port = port
        fd = socket(host.contains(":") ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestClientError.system("socket", errno) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if connectNow { try connect() }
    }

    func connect() throws {
        var storage = sockaddr_storage()
        let length: Int
        if host.contains(":") {
            length = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    address.pointee.sin6_family = sa_family_t(AF_INET6)
                    address.pointee.sin6_port = in_port_t(UInt16(port).bigEndian)
                    inet_pton(AF_INET6, host, &address.pointee.sin6_addr)
                    return MemoryLayout<sockaddr_in6>.size
                }
            }
        } else {
            length = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    address.pointee.sin_family = sa_family_t(AF_INET)
                    address.pointee.sin_port = in_port_t(UInt16(port).bigEndian)
                    inet_pton(AF_INET, host, &address.pointee.sin_addr)
                    return MemoryLayout<sockaddr_in>.size
                }
            }
        }
        let rc = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(length)) }
        }
        guard rc == 0 else { throw TestClientError.system("connect", errno) }
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == ECONNRESET || errno == EPIPE { throw TestClientError.reset }
                throw TestClientError.system("send", errno)
            }
            offset += n
        }
    }

    /// Sends without surfacing errors (for tests where the server may already have closed).
    func sendIgnoringErrors(_ text: String) { _ = try? send(text) }

    /// Reads more bytes into `pending`; returns false at EOF.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                pending.append(contentsOf: chunk[0..<n])
                return true
            }
            if n == 0 { return false }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: throw TestClientError.timedOut
            case ECONNRESET: throw TestClientError.reset
            default: throw TestClientError.system("recv", errno)
            }
        }
    }

    /// Reads one whole response (Content-Length framed; `HEAD` responses have no body).
    func readResponse(forHead: Bool = false) throws -> TestResponse {
        var headEnd: Int?
        while headEnd == nil {
            if let range = findHeadEnd() {
                headEnd = range
            } else if try !fill() {
                throw TestClientError.closed
            }
        }
        let head = String(decoding: pending[0..<headEnd!], as: UTF8.self)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0] == "HTTP/1.1", let status = Int(statusLine[1]) else {
            throw TestClientError.malformed(head)
        }
        var headers: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw TestClientError.malformed(line) }
            headers.append(
                (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: " ")))
        }
        var response = TestResponse(status: status, headers: headers, body: [])
        let length = forHead ? 0 : Int(response.header("Content-Length") ?? "0") ?? 0
        let total = headEnd! + 4 + length
        while pending.count < total {
            if try !fill() { throw TestClientError.closed }
        }
        response.body = Array(pending[(headEnd! + 4)..<total])
        pending.removeFirst(total)
        return response
    }

    /// Waits for the server to close: `nil` on a clean EOF, `.reset` on ECONNRESET, `.timedOut` otherwise.
    func waitForClose() -> TestClientError? {
        do {
            while try fill() { pending.removeAll() }
            return nil
        } catch let error as TestClientError {
            return error
        } catch {
            return .malformed("\(error)")
        }
    }

    /// Aborts our side with a TCP reset.
    func reset() {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        shutdown(fd, Int32(SHUT_RDWR))
    }

    private func findHeadEnd() -> Int? {
        guard pending.count >= 4 else { return nil }
        for i in 0...(pending.count - 4)
        where pending[i] == 13 && pending[i + 1] == 10 && pending[i + 2] == 13 && pending[i + 3] == 10 {
            return i
        }
        return nil
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}

/// A handler answering `200 text/plain` with `method path body` echoed, for most server tests.
let echoHandler: HTTPHandler = { request, _ in
    .respond(
        HTTPResponse(
            status: 200, headers: ["Content-Type": "text/plain"],
            body: Array("\(request.method) \(request.target) \(String(decoding: request.body, as: UTF8.self))".utf8)))
}
