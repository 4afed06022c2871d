import Foundation

/// Whether `serve` may open its `/__admin/*` routes on a host: on a loopback address only this
/// machine reaches them, so the token is optional; on any other address (`0.0.0.0`, a LAN
/// address, a host name other than `localhost`) anyone who reaches the port could reset the
/// ledger or change the limits mid-run, so a token is required.
package enum AdminDoor {
    /// The admin token to serve `host` with: `--admin-token-file`, else `OPTOLINK_ADMIN_TOKEN`,
    /// else nil when `host` is a loopback address.
    ///
    /// - Throws: ``SoakUsageError`` naming both ways to give a token when `host` is not a
    ///   loopback address and none is given, or when the token file cannot be read.
    package static func token(host: String, file: String?, environment: [String: String]) throws -> String? {
        if let token = try SecretSources.adminToken(file: file, environment: environment) { return token }
        guard isLoopback(host) else {
            throw SoakUsageError(
                message: "--host \(host) is not a loopback address, so /__admin/* (reset, ledger, faults, limits) "
                    + "would be open to anyone who reaches the port; give an admin token with "
                    + "--admin-token-file FILE or \(SecretSources.adminTokenVariable), or bind 127.0.0.1")
        }
        return nil
    }

    /// Whether `host` is in 127.0.0.0/8, is `::1` (also as `::ffff:127.x.y.z`) or is `localhost`.
    package static func isLoopback(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { $0.first == 127 }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, name, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        let isOne = bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1
        let isMappedLoopback =
            bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
            && bytes[12] == 127
        return isOne || isMappedLoopback
    }
}
