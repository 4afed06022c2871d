#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The system's OpenSSL 3 (`libssl.so.3`, with the `libcrypto.so.3` it pulls in), loaded at run
/// time with `dlopen` and bound by name with `dlsym`.
///
/// Why run-time loading and not a system-library target: the package must build on a machine
/// with only the Swift toolchain, and the toolchain's images ship the OpenSSL 3 *runtime* (libcurl,
/// under FoundationNetworking, links it) but not `libssl-dev`'s headers. Loading it when the first
/// `https://` client starts keeps `swift build` header-free; a machine without `libssl.so.3`
/// fails that client with an error naming the package to install. macOS has no system OpenSSL:
/// there the load fails the same way and the soak tool uses URLSession for `https://`.
///
/// Only the handful of functions the client and the tests' server need are bound; OpenSSL's
/// macros (`SSL_CTX_set_min_proto_version`, `SSL_set_tlsext_host_name`, …) are the `*_ctrl`
/// calls with the command numbers below, as `openssl/ssl.h` defines them.
///
/// `@unchecked Sendable` is sound: every stored property is a C function pointer, a `let` set
/// once in `init`, and the library is never unloaded, so the pointers stay valid for the
/// process's life and sharing a value shares no mutable state; what the functions touch
/// (`SSL_CTX`, `SSL`) is owned as ``TLSContext`` and ``TLSSession`` say.
struct LibSSL: @unchecked Sendable {
    typealias Handle = OpaquePointer

    let tlsClientMethod: @convention(c) () -> Handle?
    let tlsServerMethod: @convention(c) () -> Handle?
    let ctxNew: @convention(c) (Handle?) -> Handle?
    let ctxFree: @convention(c) (Handle?) -> Void
    let ctxCtrl: @convention(c) (Handle?, Int32, Int, UnsafeMutableRawPointer?) -> Int
    let ctxSetOptions: @convention(c) (Handle?, UInt64) -> UInt64
    let ctxSetVerify: @convention(c) (Handle?, Int32, UnsafeMutableRawPointer?) -> Void
    let ctxSetDefaultVerifyPaths: @convention(c) (Handle?) -> Int32
    let ctxLoadVerifyLocations: @convention(c) (Handle?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    let ctxSetALPNProtos: @convention(c) (Handle?, UnsafePointer<UInt8>?, UInt32) -> Int32
    let ctxUseCertificateChainFile: @convention(c) (Handle?, UnsafePointer<CChar>?) -> Int32
    let ctxUsePrivateKeyFile: @convention(c) (Handle?, UnsafePointer<CChar>?, Int32) -> Int32
    let sslNew: @convention(c) (Handle?) -> Handle?
    let sslFree: @convention(c) (Handle?) -> Void
    let sslSetFD: @convention(c) (Handle?, Int32) -> Int32
    let sslCtrl: @convention(c) (Handle?, Int32, Int, UnsafeMutableRawPointer?) -> Int
    let sslSet1Host: @convention(c) (Handle?, UnsafePointer<CChar>?) -> Int32
    let sslGet0Param: @convention(c) (Handle?) -> Handle?
    let verifyParamSet1IPAsc: @convention(c) (Handle?, UnsafePointer<CChar>?) -> Int32
    let sslConnect: @convention(c) (Handle?) -> Int32
    let sslAccept: @convention(c) (Handle?) -> Int32
    let sslRead: @convention(c) (Handle?, UnsafeMutableRawPointer?, Int32) -> Int32
    let sslWrite: @convention(c) (Handle?, UnsafeRawPointer?, Int32) -> Int32
    let sslGetError: @convention(c) (Handle?, Int32) -> Int32
    let sslSetShutdown: @convention(c) (Handle?, Int32) -> Void
    let sslGet1Session: @convention(c) (Handle?) -> Handle?
    let sslSetSession: @convention(c) (Handle?, Handle?) -> Int32
    let sessionFree: @convention(c) (Handle?) -> Void
    let sessionIsResumable: @convention(c) (Handle?) -> Int32
    let sslSessionReused: @convention(c) (Handle?) -> Int32
    let sslGetVerifyResult: @convention(c) (Handle?) -> Int
    let sslGetVersion: @convention(c) (Handle?) -> UnsafePointer<CChar>?
    let sslGet0ALPNSelected:
        @convention(c) (Handle?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, UnsafeMutablePointer<UInt32>?) -> Void
    let verifyCertErrorString: @convention(c) (Int) -> UnsafePointer<CChar>?
    let errGetError: @convention(c) () -> UInt
    let errErrorStringN: @convention(c) (UInt, UnsafeMutablePointer<CChar>?, Int) -> Void
    let errClearError: @convention(c) () -> Void

    /// `SSL_get_error` results.
    static let errorSSL: Int32 = 1
    static let errorWantRead: Int32 = 2
    static let errorWantWrite: Int32 = 3
    static let errorSyscall: Int32 = 5
    static let errorZeroReturn: Int32 = 6
    /// `SSL_CTX_ctrl` / `SSL_ctrl` commands and their arguments.
    static let ctrlMode: Int32 = 33
    static let ctrlSetTLSExtHostName: Int32 = 55
    static let ctrlSetMinProtoVersion: Int32 = 123
    static let ctrlSetSessionCacheMode: Int32 = 44
    /// `SSL_OP_IGNORE_UNEXPECTED_EOF`.
    static let optionIgnoreUnexpectedEOF: UInt64 = 1 << 7
    static let modePartialWrite = 0x1
    static let modeMovingWriteBuffer = 0x2
    static let modeReleaseBuffers = 0x10
    static let tls12Version = 0x0303
    static let nameTypeHostName = 0
    static let sessionCacheServer = 0x2
    /// `SSL_VERIFY_NONE` / `SSL_VERIFY_PEER`, `SSL_FILETYPE_PEM`, `SSL_SENT_SHUTDOWN`.
    static let verifyNone: Int32 = 0
    static let verifyPeer: Int32 = 1
    static let fileTypePEM: Int32 = 1
    static let sentShutdown: Int32 = 1

    /// The library, loaded on first use; the error says what to install when it is missing.
    static let shared: Result<LibSSL, TLSFailure> = load()

    private static func load() -> Result<LibSSL, TLSFailure> {
        #if os(Linux)
            let names = ["libssl.so.3", "libssl.so"]
            guard let handle = names.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_GLOBAL) }).first else {
                let why = dlerror().map { String(cString: $0) } ?? "not found"
                return .failure(
                    TLSFailure(
                        .configuration,
                        "cannot load OpenSSL 3 (libssl.so.3: \(why)); install it (Debian/Ubuntu: apt-get install libssl3)"
                    ))
            }
            do {
                return .success(try LibSSL(handle: handle))
            } catch {
                return .failure(error)
            }
        #else
            return .failure(
                TLSFailure(.configuration, "the native client's TLS needs the system OpenSSL, which only Linux has"))
        #endif
    }

    private init(handle: UnsafeMutableRawPointer) throws(TLSFailure) {
        func symbol<T>(_ name: String, as type: T.Type = T.self) throws(TLSFailure) -> T {
            guard let pointer = dlsym(handle, name) else {
                throw TLSFailure(
                    .configuration, "OpenSSL lacks \(name): the native client needs OpenSSL 3 (libssl.so.3)")
            }
            return unsafeBitCast(pointer, to: type)
        }
        _ = try symbol("OPENSSL_init_ssl", as: (@convention(c) (UInt64, UnsafeRawPointer?) -> Int32).self)(0, nil)
        tlsClientMethod = try symbol("TLS_client_method")
        tlsServerMethod = try symbol("TLS_server_method")
        ctxNew = try symbol("SSL_CTX_new")
        ctxFree = try symbol("SSL_CTX_free")
        ctxCtrl = try symbol("SSL_CTX_ctrl")
        ctxSetOptions = try symbol("SSL_CTX_set_options")
        ctxSetVerify = try symbol("SSL_CTX_set_verify")
        ctxSetDefaultVerifyPaths = try symbol("SSL_CTX_set_default_verify_paths")
        ctxLoadVerifyLocations = try symbol("SSL_CTX_load_verify_locations")
        ctxSetALPNProtos = try symbol("SSL_CTX_set_alpn_protos")
        ctxUseCertificateChainFile = try symbol("SSL_CTX_use_certificate_chain_file")
        ctxUsePrivateKeyFile = try symbol("SSL_CTX_use_PrivateKey_file")
        sslNew = try symbol("SSL_new")
        sslFree = try symbol("SSL_free")
        sslSetFD = try symbol("SSL_set_fd")
        sslCtrl = try symbol("SSL_ctrl")
        sslSet1Host = try symbol("SSL_set1_host")
        sslGet0Param = try symbol("SSL_get0_param")
        verifyParamSet1IPAsc = try symbol("X509_VERIFY_PARAM_set1_ip_asc")
        sslConnect = try symbol("SSL_connect")
        sslAccept = try symbol("SSL_accept")
        sslRead = try symbol("SSL_read")
        sslWrite = try symbol("SSL_write")
        sslGetError = try symbol("SSL_get_error")
        sslSetShutdown = try symbol("SSL_set_shutdown")
        sslGet1Session = try symbol("SSL_get1_session")
        sslSetSession = try symbol("SSL_set_session")
        sessionFree = try symbol("SSL_SESSION_free")
        sessionIsResumable = try symbol("SSL_SESSION_is_resumable")
        sslSessionReused = try symbol("SSL_session_reused")
        sslGetVerifyResult = try symbol("SSL_get_verify_result")
        sslGetVersion = try symbol("SSL_get_version")
        sslGet0ALPNSelected = try symbol("SSL_get0_alpn_selected")
        verifyCertErrorString = try symbol("X509_verify_cert_error_string")
        errGetError = try symbol("ERR_get_error")
        errErrorStringN = try symbol("ERR_error_string_n")
        errClearError = try symbol("ERR_clear_error")
    }

    /// OpenSSL's queued errors on this thread as one line (oldest first), and the queue cleared.
    func drainErrors() -> String {
        var parts: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while case let code = errGetError(), code != 0 {
            errErrorStringN(code, &buffer, buffer.count)
            let length = buffer.firstIndex(of: 0) ?? buffer.count
            parts.append(String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return parts.joined(separator: "; ")
    }
}
