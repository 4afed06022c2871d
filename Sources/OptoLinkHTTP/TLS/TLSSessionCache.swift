/// The last resumable TLS session per host and port, on one client loop: a new connection to a
/// host the loop has spoken TLS to resumes it (an abbreviated handshake: no certificate, no
/// key exchange from scratch), as a browser does after a server's `keepalive_requests` closes
/// a connection. Owned by the loop's thread; holds one OpenSSL reference per entry.
final class TLSSessionCache {
    struct Key: Hashable {
        var host: String
        var port: Int
    }

    private let lib: LibSSL
    private var sessions: [Key: OpaquePointer] = [:]

    init(lib: LibSSL) { self.lib = lib }

    deinit { for session in sessions.values { lib.sessionFree(session) } }

    /// The session to resume for `key`, if any (still owned by the cache).
    func session(for key: Key) -> OpaquePointer? { sessions[key] }

    /// Keeps `session` (a reference the caller hands over) for `key`, releasing the one it replaces.
    func store(_ session: OpaquePointer, for key: Key) {
        if let old = sessions.updateValue(session, forKey: key), old != session { lib.sessionFree(old) }
    }
}
