import OptoLinkHTTP

/// Runs `body` with a client on `backend` and shuts the client down on every path.
func withClient<T>(
    _ backend: EventLoopBackend, _ configuration: HTTPClient.Configuration = .init(),
    _ body: (HTTPClient) async throws -> T
) async throws -> T {
    var configuration = configuration
    configuration.eventLoopBackend = backend
    return try await withHTTPClient(configuration, body)
}

/// Runs `body` with a client made from `configuration`, shut down on every path.
func withHTTPClient<T>(
    _ configuration: HTTPClient.Configuration, _ body: (HTTPClient) async throws -> T
) async throws -> T {
    let client = try HTTPClient(configuration: configuration)
    do {
        let result = try await body(client)
        await client.shutdown()
        return result
    } catch {
        await client.shutdown()
        throw error
    }
}
