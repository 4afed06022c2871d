import Foundation
import OptoLink
import SoakRecords

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The run's cutoff as every virtual device applies it, first thing for each HTTP attempt
/// (``DeviceAttemptMiddleware``): an attempt that would start at or after the run's cutoff
/// (``RunControl/cutoff``) is refused, so "no attempt after `duration + grace`" holds whatever
/// task is still awake: a retry waking from its back-off, a session call spawned late, a link
/// resolution.
///
/// A refused attempt never reaches the recorder or the backend; the SDK sees
/// `URLError(.cancelled)`, so its call ends as cancelled.
struct RunCutoff: Sendable {
    let control: RunControl
    let timeline: RunTimeline

    /// - Throws: `URLError(.cancelled)` when an attempt starting now would start at or after the cutoff.
    func check() throws {
        guard control.attemptAllowed(at: timeline.now()) else { throw URLError(.cancelled) }
    }
}

/// What a virtual device does to each of its attempts before the recorder sees it, as one
/// middleware, the outermost: the run's cutoff (``RunCutoff``), then `X-Forwarded-For`
/// (``ForwardedForMiddleware``; under `--local-ips` only with `--forwarded-for`) and the
/// device's source address (``SourceAddressField``, `--local-ips`), then the run's `--header`
/// fields (``ExtraHeadersMiddleware``), in that order. One layer rather than several: each
/// middleware is an `async` call and a closure of the SDK's chain per attempt, about three task switches.
struct DeviceAttemptMiddleware: OptoLinkMiddleware {
    let cutoff: RunCutoff
    let forwardedFor: ForwardedForMiddleware?
    var sourceAddress: String? = nil
    let extraHeaders: ExtraHeadersMiddleware?

    func intercept(
        _ request: OptoLinkHTTPRequest, context: OptoLinkRequestContext,
        next: @Sendable (OptoLinkHTTPRequest, OptoLinkRequestContext) async throws -> OptoLinkHTTPResponse
    ) async throws -> OptoLinkHTTPResponse {
        try cutoff.check()
        var request = request
        forwardedFor?.apply(to: &request)
        if let sourceAddress { request.headers[SourceAddressField.name] = sourceAddress }
        extraHeaders?.apply(to: &request)
        return try await next(request, context)
    }
}
