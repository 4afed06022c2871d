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

    /// Sends `request` to `endpoint` as one public call and returns its 2xx response; `scope` is
    /// the call's ``OptoLinkCallScope`` when it runs in its caller's task. `nonisolated(nonsending)`
    /// where the compiler has it (Swift 6.2), like the retry loop's `run`.
    /// - Throws: ``OptoLinkApiError`` / ``OptoLinkConnectionError`` per the retry matrix.
    #if compiler(>=6.2)
        nonisolated(nonsending) func send(
            _ request: OptoLinkHTTPRequest, to endpoint: OptoLinkEndpoint, callId: UInt64? = nil,
            scope: OptoLinkCallScope? = nil
        ) async throws -> OptoLinkHTTPResponse {
            try await loop.run(request, endpoint: endpoint, callId: callId ?? nextCallId(), scope: scope)
        }
    #else
        func send(
            _ request: OptoLinkHTTPRequest, to endpoint: OptoLinkEndpoint, callId: UInt64? = nil,
            scope: OptoLinkCallScope? = nil
        ) async throws -> OptoLinkHTTPResponse {
            try await loop.run(request, endpoint: endpoint, callId: callId ?? nextCallId(), scope: scope)
        }
    #endif

    /// Sends a JSON `POST` as one public call and returns its 2xx response (``send(_:to:callId:scope:)``).
    /// - Throws: ``OptoLinkApiError`` / ``OptoLinkConnectionError`` per the retry matrix.
    func post(
        _ endpoint: OptoLinkEndpoint, body: [String: Any], callId: UInt64? = nil, scope: OptoLinkCallScope? = nil
    ) async throws -> OptoLinkHTTPResponse {
        try await send(try factory.post(endpoint, body: body), to: endpoint, callId: callId, scope: scope)
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
