/// Where `--metrics-listen` serves the live Prometheus endpoint: a loopback address and a port.
package struct MetricsListenAddress: Sendable, Equatable {
    /// `127.0.0.1` or `::1` (`localhost` means 127.0.0.1).
    package var host: String
    /// 0 = any free port (the chosen one is printed).
    package var port: Int

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT` (`127.0.0.1:9464`, `[::1]:9464`, `localhost:0`).
    /// - Throws: ``SoakUsageError`` naming `--metrics-listen` when the shape, host or port is wrong.
    package init(parsing text: String) throws {
        let usage = "--metrics-listen: \"\(text)\" is not HOST:PORT on loopback (e.g. 127.0.0.1:9464 or [::1]:9464)"
        guard let colon = text.lastIndex(of: ":") else { throw SoakUsageError(message: usage) }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" { host = "127.0.0.1" }
        guard let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw SoakUsageError(message: usage)
        }
        guard host == "127.0.0.1" || host == "::1" else {
            throw SoakUsageError(
                message: "--metrics-listen: host \"\(host)\" is not loopback (use 127.0.0.1 or [::1]; the tool "
                    + "serves its metrics to this machine only)")
        }
        self.host = host
        self.port = port
    }
}
