import OptoLinkHTTP
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback HTTPS server over the same OpenSSL binding as the client: each accepted connection
/// runs on its own blocking thread, completes the TLS handshake, and answers every request with
/// `200` and the request line as its body, closing after `requestsPerConnection` responses when set.
final class TLSTestServer: Sendable {
    let port: Int
    let connections = Atomic<Int>(0)
    /// Handshakes completed, and how many of them resumed a session.
    let handshakes = Atomic<Int>(0)
    let resumedHandshakes = Atomic<Int>(0)
    let failedHandshakes = Atomic<Int>(0)
    let requests = Atomic<Int>(0)
    private let listenFD: Int32
    private let context: TLSContext

    /// Listens on 127.0.0.1:0 presenting `identity`.
    init(_ identity: TestCertificates.Identity, requestsPerConnection: Int? = nil) throws {
        context = try TLSContext(serverCertificateChain: identity.chain, privateKey: identity.key)
        let (fd, port) = try LoopbackListener.open()
        listenFD = fd
        self.port = port
        let thread = try LoopThread.spawn { [self] in
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else { return }
                connections.wrappingAdd(1, ordering: .relaxed)
                if let worker = try? LoopThread.spawn({ self.serve(client, limit: requestsPerConnection) }) {
                    LoopThread.detach(worker)
                } else {
                    close(client)
                }
            }
        }
        LoopThread.detach(thread)
    }

    private func serve(_ fd: Int32, limit: Int?) {
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let session = try? TLSSession(serverContext: context, fd: fd), session.accept() == .done else {
            failedHandshakes.wrappingAdd(1, ordering: .relaxed)
            return
        }
        defer { session.free() }
        handshakes.wrappingAdd(1, ordering: .relaxed)
        if session.resumed { resumedHandshakes.wrappingAdd(1, ordering: .relaxed) }
        var buffer: [UInt8] = []
        var served = 0
        while limit.map({ served < $0 }) ?? true {
            guard let request = Self.nextRequest(&buffer, session) else { return }
            requests.wrappingAdd(1, ordering: .relaxed)
            served += 1
            let closing = limit.map { served >= $0 } ?? false
            let body = Array(request.utf8)
            let head =
                "HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\n" + (closing ? "Connection: close\r\n" : "")
                + "\r\n"
            var output = Array(head.utf8) + body
            var offset = 0
            guard session.flush(&output, &offset) == .done else { return }
        }
    }

    /// The next request's line (e.g. `GET /x`), reading and discarding its head and body.
    private static func nextRequest(_ buffer: inout [UInt8], _ session: TLSSession) -> String? {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if let end = headEnd(buffer) {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                var length = 0
                for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                    length = Int(line.split(separator: ":")[1].filter { $0 != " " }) ?? 0
                }
                if buffer.count >= end + length {
                    buffer.removeSubrange(..<(end + length))
                    let line = head.split(separator: "\r\n").first ?? ""
                    return line.split(separator: " ").prefix(2).joined(separator: " ")
                }
            }
            guard case .bytes(let n) = chunk.withUnsafeMutableBytes({ session.read(into: $0) }) else { return nil }
            buffer += chunk[..<n]
        }
    }

    private static func headEnd(_ buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 3..<buffer.count
        where buffer[i] == 10 && buffer[i - 1] == 13 && buffer[i - 2] == 10 && buffer[i - 3] == 13 {
            return i + 1
        }
        return nil
    }

    /// Stops accepting (connections still open finish on their own).
    func stop() {
        shutdown(listenFD, Int32(SHUT_RDWR))
        close(listenFD)
    }
}

/// Runs `body` with a TLS server presenting `identity`, stopped on every path.
func withTLSServer<T>(
    _ identity: TestCertificates.Identity, requestsPerConnection: Int? = nil, _ body: (TLSTestServer) async throws -> T
) async throws -> T {
    let server = try TLSTestServer(identity, requestsPerConnection: requestsPerConnection)
    defer { server.stop() }
    return try await body(server)
}
