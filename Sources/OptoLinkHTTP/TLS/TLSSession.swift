#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The TLS layer of one connection: an OpenSSL `SSL` over the connection's non-blocking socket.
///
/// The loop drives it by readiness: ``handshake()`` is called when the socket is connected and
/// again on each event it asked for, until it reports `.done`; after that ``read(into:)`` and
/// ``write(_:)`` stand in for `read(2)` and `send(2)`, with OpenSSL's "want read / want write"
/// turned into "would block". Owned by one loop thread.
package final class TLSSession {
    package enum Step: Equatable {
        case done
        /// Call again when the socket is readable.
        case wantRead
        /// Call again when the socket is writable.
        case wantWrite
        case failed(TLSFailure)
    }

    package enum ReadResult {
        case bytes(Int)
        case endOfInput
        case wouldBlock
        case failed
    }

    package enum WriteResult {
        case wrote(Int)
        case wouldBlock
        case failed
    }

    private let lib: LibSSL
    private let ssl: OpaquePointer
    private let verifiesPeer: Bool
    private var freed = false

    /// A client session to `host` on `fd`, resuming `session` when given.
    ///
    /// The host is verified as an IP address when it is an IP literal, as a DNS name otherwise
    /// (then also sent as SNI).
    package init(context: TLSContext, fd: Int32, host: String, resuming session: OpaquePointer?) throws(TLSFailure) {
        let lib = context.lib
        guard let ssl = lib.sslNew(context.ctx) else {
            throw TLSFailure(.configuration, "SSL_new failed: \(lib.drainErrors())")
        }
        self.lib = lib
        self.ssl = ssl
        self.verifiesPeer = context.verifiesPeer
        guard lib.sslSetFD(ssl, fd) == 1 else {
            throw TLSFailure(.configuration, "SSL_set_fd failed: \(lib.drainErrors())")
        }
        let isIPLiteral = Self.isIPLiteral(host)
        if !isIPLiteral {
            _ = host.withCString { name in
                lib.sslCtrl(
                    ssl, LibSSL.ctrlSetTLSExtHostName, LibSSL.nameTypeHostName, UnsafeMutableRawPointer(mutating: name))
            }
        }
        if context.verifiesPeer {
            let set = isIPLiteral ? lib.verifyParamSet1IPAsc(lib.sslGet0Param(ssl), host) : lib.sslSet1Host(ssl, host)
            guard set == 1 else { throw TLSFailure(.configuration, "cannot verify against host \(host)") }
        }
        if let session { _ = lib.sslSetSession(ssl, session) }
    }

    /// A server session on an accepted socket (the tests' TLS server).
    package init(serverContext context: TLSContext, fd: Int32) throws(TLSFailure) {
        let lib = context.lib
        guard let ssl = lib.sslNew(context.ctx), lib.sslSetFD(ssl, fd) == 1 else {
            throw TLSFailure(.configuration, "SSL_new failed: \(lib.drainErrors())")
        }
        self.lib = lib
        self.ssl = ssl
        self.verifiesPeer = false
    }

    deinit { free() }

    /// Advances the client handshake as far as the socket allows.
    package func handshake() -> Step { step(lib.sslConnect(ssl)) }

    /// Advances the server handshake (blocking socket: runs it to the end).
    package func accept() -> Step { step(lib.sslAccept(ssl)) }

    private func step(_ rc: Int32) -> Step {
        if rc == 1 { return .done }
        let code = lib.sslGetError(ssl, rc)
        switch code {
        case LibSSL.errorWantRead: return .wantRead
        case LibSSL.errorWantWrite: return .wantWrite
        default: return .failed(failure(code))
        }
    }

    /// The handshake's failure: a certificate verification result first, then OpenSSL's error queue.
    private func failure(_ code: Int32) -> TLSFailure {
        let queued = lib.drainErrors()
        let verify = lib.sslGetVerifyResult(ssl)
        if verifiesPeer, verify != 0 {
            let text = lib.verifyCertErrorString(verify).map { String(cString: $0) } ?? "error \(verify)"
            return TLSFailure(TLSFailure.kind(verifyResult: verify), text)
        }
        if !queued.isEmpty { return TLSFailure(.protocol, queued) }
        if code == LibSSL.errorSyscall || code == LibSSL.errorZeroReturn {
            return TLSFailure(.protocol, "the server closed the connection during the TLS handshake")
        }
        return TLSFailure(.protocol, "handshake failed (SSL_get_error \(code))")
    }

    /// Decrypted bytes into `buffer`.
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        let n = lib.sslRead(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        if n > 0 { return .bytes(Int(n)) }
        switch lib.sslGetError(ssl, n) {
        // A renegotiation or key update that needs to write: the level-triggered poller calls again.
        case LibSSL.errorWantRead, LibSSL.errorWantWrite: return .wouldBlock
        case LibSSL.errorZeroReturn: return .endOfInput  // close_notify
        case LibSSL.errorSyscall:
            lib.errClearError()
            return n == 0 ? .endOfInput : .failed  // a TCP close without close_notify reads as the end
        default:
            lib.errClearError()
            return .failed
        }
    }

    /// Encrypts and sends up to `bytes.count` bytes.
    package func write(_ bytes: UnsafeRawBufferPointer) -> WriteResult {
        guard !bytes.isEmpty else { return .wrote(0) }
        let n = lib.sslWrite(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
        if n > 0 { return .wrote(Int(n)) }
        switch lib.sslGetError(ssl, n) {
        case LibSSL.errorWantRead, LibSSL.errorWantWrite: return .wouldBlock
        default:
            lib.errClearError()
            return .failed
        }
    }

    /// Writes `output[offset...]` as ``SocketWrite/flush(_:_:_:)`` does for a plain socket.
    package func flush(_ output: inout [UInt8], _ offset: inout Int) -> SocketWrite.Outcome {
        while offset < output.count {
            let result = output.withUnsafeBytes { bytes in write(UnsafeRawBufferPointer(rebasing: bytes[offset...])) }
            switch result {
            case .wrote(let n): offset += n
            case .wouldBlock: return .wouldBlock
            case .failed: return .failed
            }
        }
        SocketWrite.written(&output, &offset)
        return .done
    }

    /// Whether the handshake resumed an earlier session (no certificate exchange).
    package var resumed: Bool { lib.sslSessionReused(ssl) == 1 }

    /// The negotiated protocol, e.g. `TLSv1.3`.
    package var version: String { lib.sslGetVersion(ssl).map { String(cString: $0) } ?? "" }

    /// The protocol the server picked by ALPN, `nil` when it picked none.
    var alpn: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        lib.sslGet0ALPNSelected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// A retained reference to the session, when a later connection can resume it (TLS 1.3:
    /// once the server's ticket has arrived, i.e. after the first response); the caller frees it.
    func resumableSession() -> OpaquePointer? {
        guard let session = lib.sslGet1Session(ssl) else { return nil }
        if lib.sessionIsResumable(session) == 1 { return session }
        lib.sessionFree(session)
        return nil
    }

    /// Frees the `SSL` (the socket stays the caller's to close). The session is marked as shut
    /// down first: OpenSSL would otherwise mark it not resumable, and a clean close of a
    /// kept-alive connection is no reason to forget it (a fatal alert has already done so).
    package func free() {
        guard !freed else { return }
        freed = true
        lib.sslSetShutdown(ssl, LibSSL.sentShutdown)
        lib.sslFree(ssl)
    }

    private static func isIPLiteral(_ host: String) -> Bool {
        guard host.lowercased() != "localhost" else { return false }
        var storage = sockaddr_storage()
        return (try? ListeningSocket.fill(&storage, host: host, port: 1)) != nil
    }
}
