import OptoLink

/// Adds `X-Forwarded-For: <ip>` to every attempt, so the emulator (trusting the header)
/// attributes the request to the virtual device's simulated client IP.
package struct ForwardedForMiddleware: RequestEditingMiddleware {
    package let clientIP: String

    package init(clientIP: String) { self.clientIP = clientIP }

    /// Sets the header on `request`.
    package func apply(to request: inout OptoLinkHTTPRequest) {
        request.headers["X-Forwarded-For"] = clientIP
    }
}

/// A middleware that only edits each attempt's request (``apply(to:)``) and passes it on.
package protocol RequestEditingMiddleware: OptoLinkMiddleware {
    /// Edits `request` before it goes to the next layer.
    func apply(to request: inout OptoLinkHTTPRequest)
}

extension RequestEditingMiddleware {
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
