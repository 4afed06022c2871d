import Foundation
import OptoLink

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The outermost middleware of every virtual device: refuses any HTTP attempt that would
/// start at or after the run's cutoff (``RunControl/cutoff``), so "no attempt after
/// `duration + grace`" holds whatever task is still awake: a retry waking from its back-off,
/// a session call spawned late, a link resolution.
///
/// A refused attempt never reaches the recorder or the backend; the SDK sees
/// `URLError(.cancelled)`, so its call ends as cancelled.
struct RunCutoffMiddleware: OptoLinkMiddleware {
    let control: RunControl
    let timeline: RunTimeline

    func intercept(
        _ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext,
        next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
    ) async throws -> OptoLinkHTTPResponse {
        guard control.attemptAllowed(at: timeline.now()) else { throw URLError(.cancelled) }
        return try await next(request, context)
    }
}
