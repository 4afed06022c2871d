import OptoLinkHTTP
import SoakSupport

extension StagingBackend {
    /// The `401` for an admin request that does not carry the backend's admin token as
    /// `Authorization: Bearer <token>` (compared in constant time); `nil` when it does, when
    /// the backend has no token, and for `GET /__admin/health`, which answers only `{"ok":true}`
    /// and stays open for liveness probes and load balancers.
    func adminRefusal(_ route: Route.AdminRoute, _ context: RequestContext) -> HTTPResponse? {
        guard let adminToken, route != .health else { return nil }
        let header = context.request.headers["Authorization"] ?? ""
        let scheme = "bearer "
        let given = header.lowercased().hasPrefix(scheme) ? header.dropFirst(scheme.count) : ""
        if ConstantTimeComparison.equal(given, adminToken) { return nil }
        return errorResponse(
            401, "Missing or wrong admin token: send Authorization: Bearer <token> for /__admin/* routes", context)
    }
}
