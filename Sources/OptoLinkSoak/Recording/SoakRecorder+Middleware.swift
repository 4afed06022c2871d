import Foundation
import OptoLink
import SoakRecords

/// The recorder is the one recording middleware every virtual device's SDK instance shares:
/// it observes each attempt on its way to the shared transport.
extension SoakRecorder: OptoLinkMiddleware {
    package func intercept(
        _ request: OptoLinkHTTPRequest,
        context: OptoLinkRequestContext,
        next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
    ) async throws -> OptoLinkHTTPResponse {
        let launch = DeviceLaunch(label: context.instanceLabel)
        let actualStart = timeline.now()
        let intended = beginAttempt(launch: launch, context: context, actualStart: actualStart)
        var record = AttemptRecord(
            device: launch.device, launch: launch.launch, callId: context.callId,
            endpoint: ContractEndpoint(context.endpoint),
            attempt: context.attempt, intendedStart: intended, actualStart: actualStart, end: actualStart, status: nil,
            errorKind: nil, retryAfterSeconds: nil, requestBytes: request.body?.count ?? 0, responseBytes: 0,
            correlationId: nil,
            clientIP: request.headers[SourceAddressField.name] ?? request.headers["X-Forwarded-For"])
        // What is read from the bodies (correlation id, a 429's `N`, off-contract) is read where the
        // row is written, off the request's thread.
        do {
            let response = try await next(request, context)
            record.end = timeline.now()
            record.status = response.status
            record.responseBytes = response.body.count
            record.tls = TLSHandshakeField.seconds(in: response.headers)
            endAttempt(record: record, bodies: AttemptBodies(request: request.body, response: response.body))
            return response
        } catch {
            record.end = timeline.now()
            var kind = AttemptClassification.errorKind(
                error, elapsed: record.end - actualStart, timeout: context.timeout)
            if kind == .cancelled, control?.wasCut == true { kind = .cancelledByRun }
            record.errorKind = kind
            endAttempt(record: record, bodies: AttemptBodies(request: request.body, response: nil))
            throw error
        }
    }
}
