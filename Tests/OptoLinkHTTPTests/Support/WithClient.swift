@testable import OptoLinkHTTP

/// Runs `body` with a client on `backend` and shuts the client down on every path.
func withClient<T>(
    _ backend: EventLoopBackend, _ configuration: HTTPClient.Configuration = .init(),
    _ body: (HTTPClient) async throws -> T
) async throws -> T {
    var configuration = configuration
    configuration.eventLoopBackend = backend
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
