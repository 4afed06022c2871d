import OptoLinkHTTP

/// The `--metrics-listen` endpoint: `GET /metrics` on the project's own HTTP server answers the
/// current ``LiveMetrics`` in the Prometheus text format; any other path is 404, any other method 405.
///
/// Loopback only (``MetricsListenAddress`` refuses other hosts). One event loop; a scrape renders
/// a snapshot under the recorder's lock (microseconds) and never blocks the run.
final class MetricsEndpoint: Sendable {
    let server: HTTPServer

    /// Starts serving `snapshot()`.
    /// - Throws: ``HTTPServerError`` when the address cannot be bound (e.g. the port is in use).
    init(address: MetricsListenAddress, snapshot: @escaping @Sendable () -> LiveMetrics) throws {
        server = HTTPServer(configuration: .init(host: address.host, port: address.port, loopCount: 1)) { request, _ in
            guard request.path == "/metrics" else {
                return .respond(
                    HTTPResponse(
                        status: 404, headers: ["Content-Type": "text/plain"], body: Array("try /metrics\n".utf8)))
            }
            guard request.method == "GET" || request.method == "HEAD" else {
                return .respond(HTTPResponse(status: 405, headers: ["Allow": "GET, HEAD"]))
            }
            let body = Array(snapshot().exposition().utf8)
            return .respond(
                HTTPResponse(
                    status: 200, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
                    body: request.method == "HEAD" ? [] : body))
        }
        try server.start()
    }

    /// The bound port.
    var port: Int { server.port }

    func stop() async { await server.shutdown() }
}
