import OptoLinkHTTP

extension StagingBackend {
    /// Runs `route` under the fault drawn for this endpoint (docs/CONTRACT.md §4, "Fault injection").
    ///
    /// Before-commit faults answer without running the route. After-commit faults run the
    /// route and replace its answer only when it committed (a 4xx or 429 passes through
    /// unchanged); latency delays whatever the route answered.
    func withFaults(_ context: RequestContext, _ route: (RequestContext) -> RouteOutcome) -> HTTPHandlerResult {
        guard let fault = faults.draw(context.endpoint) else { return .respond(route(context).response) }
        if !fault.commitsWrite {
            endpointCounters.recordFault(context.endpoint, fault.kind)
            return answer(fault, context)
        }
        var context = context
        context.faultAfterCommit = fault.kind.rawValue
        let outcome = route(context)
        if fault.kind == .latency {
            endpointCounters.recordFault(context.endpoint, fault.kind)
            return .respondAfter(outcome.response, delay: Self.latency(fault.delaySeconds))
        }
        guard outcome.committed else { return .respond(outcome.response) }
        endpointCounters.recordFault(context.endpoint, fault.kind)
        return answer(fault, context)
    }

    /// The latency fault's delay: 15 s by default, clamped to 0…1 h (a NaN or huge value never traps).
    package static func latency(_ seconds: Double?) -> Duration {
        let value = seconds ?? 15
        guard value.isFinite, value > 0 else { return .zero }
        return .milliseconds(Int64(min(value, 3600) * 1000))
    }

    private func answer(_ fault: StagingFaultRule, _ context: RequestContext) -> HTTPHandlerResult {
        switch fault.kind {
        case .errorBeforeCommit: .respond(serverError(fault.status ?? 503, context))
        case .errorAfterCommit: .respond(serverError(fault.status ?? 500, context))
        case .html502: .respond(FaultResponses.html502())
        case .empty5xx: .respond(FaultResponses.empty(status: fault.status ?? 503))
        case .reset: .reset
        case .latency: .respond(serverError(500, context))  // not reached: latency is handled by the caller
        }
    }

    private func serverError(_ status: Int, _ context: RequestContext) -> HTTPResponse {
        errorResponse(status, status == 500 ? "Internal server error" : Self.reasonPhrase(status), context)
    }
}
