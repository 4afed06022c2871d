import OptoLink

/// Adds `X-Forwarded-For: <ip>` to every attempt, so the emulator (trusting the header)
/// attributes the request to the virtual device's simulated client IP.
package struct ForwardedForMiddleware: OptoLinkMiddleware {
    package let clientIP: String

    package init(clientIP: String) { self.clientIP = clientIP }

    /// Sets the header on `request`.
    func apply(to request: inout OptoLinkHTTPRequest) {
        request.headers["X-Forwarded-For"] = clientIP
    }

    package func intercept(
        _ request: OptoLinkHTTPRequest,
        context: OptoLinkRequestContext,
        next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
    ) async throws -> OptoLinkHTTPResponse {
        var request = request
        apply(to: &request)
        return try await next(request, context)
    }
}
