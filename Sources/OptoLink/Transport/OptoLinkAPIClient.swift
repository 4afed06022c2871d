import Foundation

/// One instance's way to the backend: builds each request, numbers public calls
/// (`callId` from 1) and runs them through the shared retry loop. A class, so the calls and
/// background work that hold it share one reference instead of copying the factory and the
/// retry loop (with the instance's environment) into each.
final class OptoLinkAPIClient: Sendable {
    let factory: OptoLinkRequestFactory
    let loop: OptoLinkRetryLoop
    private let callIds = LockedBox<UInt64>(0)

    init(config: OptoLinkConfig, environment: OptoLinkEnvironment, log: OptoLinkLog) {
        factory = OptoLinkRequestFactory(baseUrl: config.baseUrl, apiKey: config.apiKey)
        loop = OptoLinkRetryLoop(environment: environment, config: config, log: log)
    }

    /// The next public call's id (1, 2, 3, … per instance).
    func nextCallId() -> UInt64 {
        callIds.withLock { value in
            value += 1
            return value
        }
    }

    /// Sends a JSON `POST` as one public call and returns its 2xx response; `scope` is the
    /// call's ``OptoLinkCallScope`` when it runs in its caller's task.
    /// - Throws: ``OptoLinkApiError`` / ``OptoLinkConnectionError`` per the retry matrix.
    nonisolated(nonsending) func post(
        _ endpoint: OptoLinkEndpoint, body: [String: Any], callId: UInt64? = nil, scope: OptoLinkCallScope? = nil
    ) async throws -> OptoLinkHTTPResponse {
        let request = try factory.post(endpoint, body: body)
        return try await loop.run(request, endpoint: endpoint, callId: callId ?? nextCallId(), scope: scope)
    }

    /// Sends a `POST` of a JSON body already written as one public call and returns its 2xx response.
    /// - Throws: ``OptoLinkApiError`` / ``OptoLinkConnectionError`` per the retry matrix.
    nonisolated(nonsending) func post(
        _ endpoint: OptoLinkEndpoint, json: Data, callId: UInt64? = nil, scope: OptoLinkCallScope? = nil
    ) async throws -> OptoLinkHTTPResponse {
        let request = try factory.post(endpoint, json: json)
        return try await loop.run(request, endpoint: endpoint, callId: callId ?? nextCallId(), scope: scope)
    }

    /// `GET /{orgKey}/{shortCode}/data?deviceId=…` as one public call.
    /// - Throws: ``OptoLinkApiError`` / ``OptoLinkConnectionError`` per the retry matrix.
    func linkData(orgKey: String, shortCode: String, deviceId: String) async throws
        -> OptoLinkHTTPResponse
    {
        let request = try factory.linkData(orgKey: orgKey, shortCode: shortCode, deviceId: deviceId)
        return try await loop.run(request, endpoint: .data, callId: nextCallId())
    }
}
