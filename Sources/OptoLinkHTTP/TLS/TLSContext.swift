/// One OpenSSL `SSL_CTX`: protocol floor, trust store, verification mode and ALPN, set up once;
/// every connection's ``TLSSession`` is made from it.
///
/// `@unchecked Sendable` is sound: `ctx` is configured completely in `init` and never changed
/// after, and OpenSSL allows `SSL_new` on one fully set-up `SSL_CTX` from any number of threads
/// at once; the other stored properties are `let`s of Sendable values.
package final class TLSContext: @unchecked Sendable {

    let lib: LibSSL
    let ctx: OpaquePointer
    /// Whether the server's certificate and host are checked.
    package let verifiesPeer: Bool

    /// A client context for `configuration`.
    ///
    /// - Throws: ``TLSFailure`` of kind `configuration` when OpenSSL is missing or the trust file
    ///   does not load (the reason names the file and OpenSSL's complaint).
    package convenience init(client configuration: TLSConfiguration) throws(TLSFailure) {
        let lib = try LibSSL.shared.get()
        try self.init(lib: lib, method: lib.tlsClientMethod(), verifiesPeer: configuration.verifiesPeer)
        if configuration.verifiesPeer {
            lib.ctxSetVerify(ctx, LibSSL.verifyPeer, nil)
            // The system store, or SSL_CERT_FILE / SSL_CERT_DIR when set (OpenSSL reads them here).
            guard lib.ctxSetDefaultVerifyPaths(ctx) == 1 else {
                throw TLSFailure(.configuration, "cannot load the system trust store: \(lib.drainErrors())")
            }
        } else {
            lib.ctxSetVerify(ctx, LibSSL.verifyNone, nil)
        }
        if let file = configuration.additionalTrustFile {
            guard lib.ctxLoadVerifyLocations(ctx, file, nil) == 1 else {
                throw TLSFailure(
                    .configuration, "cannot load CA certificates from \(file) (a PEM bundle): \(lib.drainErrors())")
            }
        }
        let alpn: [UInt8] = [8] + Array("http/1.1".utf8)
        _ = lib.ctxSetALPNProtos(ctx, alpn, UInt32(alpn.count))  // 0 on success; a server may ignore ALPN
    }

    /// A server context presenting `certificateChain` (PEM, leaf first) with `privateKey` (PEM),
    /// for the tests' TLS server.
    package convenience init(serverCertificateChain chain: String, privateKey key: String) throws(TLSFailure) {
        let lib = try LibSSL.shared.get()
        try self.init(lib: lib, method: lib.tlsServerMethod(), verifiesPeer: false)
        guard lib.ctxUseCertificateChainFile(ctx, chain) == 1,
            lib.ctxUsePrivateKeyFile(ctx, key, LibSSL.fileTypePEM) == 1
        else {
            throw TLSFailure(.configuration, "cannot load \(chain) / \(key): \(lib.drainErrors())")
        }
    }

    private init(lib: LibSSL, method: OpaquePointer?, verifiesPeer: Bool) throws(TLSFailure) {
        guard let ctx = lib.ctxNew(method) else {
            throw TLSFailure(.configuration, "SSL_CTX_new failed: \(lib.drainErrors())")
        }
        self.lib = lib
        self.ctx = ctx
        self.verifiesPeer = verifiesPeer
        _ = lib.ctxCtrl(ctx, LibSSL.ctrlSetMinProtoVersion, LibSSL.tls12Version, nil)
        // Partial writes and a moving buffer: the loop writes from a Swift array that may move
        // between retries; released buffers: an idle pooled connection holds no 16 KB record buffers.
        let mode = LibSSL.modePartialWrite | LibSSL.modeMovingWriteBuffer | LibSSL.modeReleaseBuffers
        _ = lib.ctxCtrl(ctx, LibSSL.ctrlMode, mode, nil)
        // A TCP close without close_notify reads as the end of input, as on a plain socket: HTTP's own
        // framing (Content-Length, chunked) still tells a complete response from a truncated one.
        _ = lib.ctxSetOptions(ctx, LibSSL.optionIgnoreUnexpectedEOF)
    }

    deinit { lib.ctxFree(ctx) }
}
