import OptoLinkHTTP
import SoakSupport

extension StagingBackend {
    /// The `401` for an admin request that does not carry the backend's admin token as
    /// `Authorization: Bearer <token>` (compared in constant time); `nil` when it does and when
    /// the backend has no token. Every admin route is behind the token, `GET /__admin/health`
    /// included: a probe of a locked emulator sends the header (Kubernetes `httpGet.httpHeaders`)
    /// or checks the port alone (`tcpSocket`).
    func adminRefusal(_ context: RequestContext) -> HTTPResponse? {
        guard let adminToken else { return nil }
        let header = context.request.headers["Authorization"] ?? ""
        let scheme = "bearer "
        let given = header.lowercased().hasPrefix(scheme) ? header.dropFirst(scheme.count) : ""
        if ConstantTimeComparison.equal(given, adminToken) { return nil }
        return errorResponse(
            401, "Missing or wrong admin token: send Authorization: Bearer <token> for /__admin/* routes", context)
    }
}
