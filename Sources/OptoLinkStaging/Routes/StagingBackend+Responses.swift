import OptoLinkHTTP

/// One entry of an error envelope's `details` (400 only).
struct ValidationIssue: Sendable, Equatable {
    var field: String
    var message: String
    /// A class-validator length constraint: when it is the only issue, it becomes the envelope's message.
    var isLength = false
}

extension StagingBackend {
    static let jsonHeaders: HTTPHeaders = ["Content-Type": "application/json; charset=utf-8"]

    func json(_ status: Int, _ writer: JSONWriter) -> HTTPResponse {
        HTTPResponse(status: status, headers: Self.jsonHeaders, body: writer.bytes)
    }

    /// The error envelope of docs/CONTRACT.md §1: `statusCode`, `error`, `message`, `details` (400
    /// only), `timestamp` (ISO-8601 with ms), `path`, `requestId` (only when the client sent one).
    func errorResponse(_ status: Int, _ message: String, _ context: RequestContext, details: [ValidationIssue]? = nil)
        -> HTTPResponse
    {
        errorEnvelope(
            status, message, now: context.now, path: context.path, requestId: context.requestId, details: details)
    }

    /// The envelope for an error the HTTP layer answers by itself (400, including a missing,
    /// repeated or invalid `Host`; 408, 413, 431, 501, 505; 411 only for a server that requires
    /// `Content-Length`, which the emulator's does not): the request could not be parsed, so
    /// `path` is empty and no `requestId` is echoed.
    package func protocolErrorResponse(_ context: HTTPServerErrorContext) -> HTTPResponse {
        errorEnvelope(
            context.status, Self.protocolErrorMessage(context), now: clock.now(), path: "", requestId: nil,
            details: nil)
    }

    static func protocolErrorMessage(_ context: HTTPServerErrorContext) -> String {
        switch context.parseError {
        case nil: "Request not received in time"
        case .malformedRequestLine: "Malformed request line"
        case .malformedHeader: "Malformed header field"
        case .headersTooLarge: "Request header fields too large"
        case .bodyTooLarge: "Request body too large"
        case .unsupportedTransferEncoding: "Transfer-Encoding not implemented (only chunked)"
        case .invalidTransferEncoding: "Conflicting or invalid Transfer-Encoding"
        case .malformedChunkedBody: "Malformed chunked body"
        case .lengthRequired: "Content-Length required"
        case .invalidContentLength: "Invalid Content-Length"
        case .unsupportedVersion: "HTTP version not supported"
        case .missingHost: "Host header required"
        case .multipleHosts: "More than one Host header"
        case .invalidHost: "Invalid Host header or target authority"
        }
    }

    private func errorEnvelope(
        _ status: Int, _ message: String, now: Double, path: String, requestId: String?, details: [ValidationIssue]?
    ) -> HTTPResponse {
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        w.key("statusCode")
        w.int(status)
        w.field("error", Self.reasonPhrase(status))
        w.field("message", message)
        if status == 400, let details {
            w.key("details")
            w.beginArray()
            for issue in details {
                w.beginObject()
                w.field("message", issue.message)
                w.field("field", issue.field)
                w.endObject()
            }
            w.endArray()
        }
        w.field("timestamp", ISO8601.string(fromEpochSeconds: now))
        w.field("path", path)
        if let requestId { w.field("requestId", requestId) }
        w.endObject()
        return json(status, w)
    }

    /// 400 for validation issues: a lone length issue is the message, else `Validation failed`.
    func validationResponse(_ issues: [ValidationIssue], _ context: RequestContext) -> HTTPResponse {
        let message = issues.count == 1 && issues[0].isLength ? issues[0].message : "Validation failed"
        return errorResponse(400, message, context, details: issues)
    }

    /// 429 with the exact message of docs/CONTRACT.md §1 and no header or JSON field for the wait.
    func rateLimitedResponse(retryAfterSeconds: Int, _ context: RequestContext) -> HTTPResponse {
        errorResponse(429, RateLimitDecision.message(retryAfterSeconds: retryAfterSeconds), context)
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 410: "Gone"
        case 411: "Length Required"
        case 413: "Payload Too Large"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: status >= 500 ? "Internal Server Error" : "Error"
        }
    }
}
