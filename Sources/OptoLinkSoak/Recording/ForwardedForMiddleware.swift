import OptoLink

/// Adds `X-Forwarded-For: <ip>` to every attempt, so the emulator (trusting the header)
/// attributes the request to the virtual device's simulated client IP.
public struct ForwardedForMiddleware: OptoLinkMiddleware {
    public let clientIP: String

    public init(clientIP: String) { self.clientIP = clientIP }

    public func intercept(
        _ request: OptoLinkHTTPRequest,
        context: OptoLinkRequestContext,
        next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
    ) async throws -> OptoLinkHTTPResponse {
        var request = request
        request.headers["X-Forwarded-For"] = clientIP
        return try await next(request, context)
    }
}
