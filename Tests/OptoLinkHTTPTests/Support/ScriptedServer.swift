import OptoLinkHTTP
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback TCP server whose every connection runs a script on its own blocking thread, for
/// producing exact failure shapes (a reset before any byte, a trickle, silence) against the client.
final class ScriptedServer: Sendable {
    /// One accepted connection, driven by blocking calls (each bounded by a 5 s socket timeout).
    final class Peer: @unchecked Sendable {
        // Safe: a Peer is used only by the one script thread that owns its connection.
        let fd: Int32
        private var buffer: [UInt8] = []
        private let server: ScriptedServer
        private var closed = false

        init(fd: Int32, server: ScriptedServer) {
            self.fd = fd
            self.server = server
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { if !closed { Glibc.close(fd) } }

        /// Reads one request (head, then `Content-Length` bytes); `nil` when the client closed or reset.
        @discardableResult
        func readRequest() -> String? {
            while true {
                if let end = headEnd() {
                    let head = String(decoding: buffer[..<end], as: UTF8.self)
                    var length = 0
                    for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                        length = Int(line.split(separator: ":")[1].trimmingCharacters()) ?? 0
                    }
                    let expectsContinue = head.lowercased().contains("expect: 100-continue")
                    if expectsContinue, buffer.count < end + length, continueAnswer != nil {
                        write(continueAnswer!)
                        continueAnswer = nil
                    }
                    while buffer.count < end + length { guard fill() else { return nil } }
                    let text = String(decoding: buffer[..<(end + length)], as: UTF8.self)
                    buffer.removeSubrange(..<(end + length))
                    server.requests.wrappingAdd(1, ordering: .relaxed)
                    server.record(text)
                    return text
                }
                guard fill() else { return nil }
            }
        }

        /// Sent when a request with `Expect: 100-continue` waits for its body; `nil` sends nothing.
        var continueAnswer: String? = "HTTP/1.1 100 Continue\r\n\r\n"

        func write(_ text: String) {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        /// Aborts with a TCP reset.
        func reset() {
            var l = linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, socklen_t(MemoryLayout<linger>.size))
            close()
        }

        func close() {
            guard !closed else { return }
            closed = true
            Glibc.close(fd)
        }

        /// Blocks until the client closes or resets the connection (or 5 s pass); records a close.
        func awaitClientClose() {
            var byte: UInt8 = 0
            while true {
                let n = recv(fd, &byte, 1, 0)
                if n > 0 { continue }
                if n < 0 && errno == EINTR { continue }
                if n == 0 || errno == ECONNRESET { server.clientCloses.wrappingAdd(1, ordering: .relaxed) }
                return
            }
        }

        private func headEnd() -> Int? {
            guard buffer.count >= 4 else { return nil }
            for i in 3..<buffer.count
            where buffer[i] == 10 && buffer[i - 1] == 13 && buffer[i - 2] == 10 && buffer[i - 3] == 13 {
                return i + 1
            }
            return nil
        }

        private func fill() -> Bool {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = recv(fd, &chunk, chunk.count, 0)
            guard n > 0 else { return false }
            buffer += chunk[..<n]
            return true
        }
    }

    let port: Int
    let connections = Atomic<Int>(0)
    let requests = Atomic<Int>(0)
    /// Connections whose client closed or reset them while a script waited in ``Peer/awaitClientClose()``.
    let clientCloses = Atomic<Int>(0)
    private let listenFD: Int32
    private let seen = Mutex<[String]>([])

    /// Listens on 127.0.0.1:0 and runs `script` for every accepted connection (index from 0).
    init(_ script: @escaping @Sendable (Peer, Int) -> Void) throws {
        let (fd, port) = try LoopbackListener.open()
        listenFD = fd
        self.port = port
        let thread = try LoopThread.spawn { [self] in
            var index = 0
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else { return }
                connections.wrappingAdd(1, ordering: .relaxed)
                let peer = Peer(fd: client, server: self)
                let current = index
                index += 1
                if let worker = try? LoopThread.spawn({ script(peer, current) }) { LoopThread.detach(worker) }
            }
        }
        LoopThread.detach(thread)
    }

    /// Requests read so far, in order.
    var requestTexts: [String] { seen.withLock { $0 } }

    fileprivate func record(_ text: String) { seen.withLock { $0.append(text) } }

    /// Stops accepting (scripts still running finish on their own).
    func stop() {
        shutdown(listenFD, Int32(SHUT_RDWR))
        close(listenFD)
    }
}

extension Substring {
    fileprivate func trimmingCharacters() -> String {
        String(self.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
