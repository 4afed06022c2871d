import Foundation
import OptoLink

/// The recorder is the one recording middleware every virtual device's SDK instance shares:
/// it observes each attempt on its way to the shared transport.
extension SoakRecorder: OptoLinkMiddleware {
    package func intercept(
        _ request: OptoLinkHTTPRequest,
        context: OptoLinkRequestContext,
        next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
    ) async throws -> OptoLinkHTTPResponse {
        let label = context.instanceLabel ?? "?"
        let actualStart = timeline.now()
        let (device, launch) = AttemptClassification.splitLabel(label)
        let intended = beginAttempt(
            label: label, context: context, actualStart: actualStart, parts: (device, launch))
        var record = AttemptRecord(
            device: device, launch: launch, callId: context.callId, endpoint: context.endpoint,
            attempt: context.attempt, intendedStart: intended, actualStart: actualStart, end: actualStart, status: nil,
            errorKind: nil, retryAfterSeconds: nil, requestBytes: request.body?.count ?? 0, responseBytes: 0,
            correlationId: AttemptClassification.correlationId(endpoint: context.endpoint, body: request.body),
            clientIP: request.headers["X-Forwarded-For"])
        do {
            let response = try await next(request, context)
            record.end = timeline.now()
            record.status = response.status
            record.responseBytes = response.body.count
            record.retryAfterSeconds = AttemptClassification.retryAfterSeconds(
                status: response.status, body: response.body)
            record.offContract = AttemptClassification.isOffContract(
                endpoint: context.endpoint, status: response.status, body: response.body)
            endAttempt(label: label, record: record)
            return response
        } catch {
            record.end = timeline.now()
            var kind = AttemptClassification.errorKind(
                error, elapsed: record.end - actualStart, timeout: context.timeout)
            if kind == .cancelled, control?.wasCut == true { kind = .cancelledByRun }
            record.errorKind = kind
            endAttempt(label: label, record: record)
            throw error
        }
    }
}
