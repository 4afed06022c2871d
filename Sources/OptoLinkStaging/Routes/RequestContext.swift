import OptoLinkHTTP

/// One request as the routes see it: the request, client IP, arrival time and the fault
/// (if any) that will answer after the write commits.
struct RequestContext: Sendable {
    var request: HTTPRequest
    var ip: String
    /// Arrival time, epoch seconds.
    var now: Double
    var endpoint: StagingEndpoint
    /// Set when an after-commit fault (or latency) was drawn: the ledger marks the write with it.
    var faultAfterCommit: String? = nil

    var path: String { request.path }
    /// The client-sent `x-request-id`, echoed in error envelopes.
    var requestId: String? { request.headers["x-request-id"] }
}

/// What a route produced: the response, and whether its write (or read side effect) committed.
struct RouteOutcome: Sendable {
    var response: HTTPResponse
    var committed: Bool

    init(_ response: HTTPResponse, committed: Bool = false) {
        self.response = response
        self.committed = committed
    }
}
