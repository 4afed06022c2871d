import Foundation
import OptoLinkHTTP

extension StagingBackend {
    /// The admin routes: `GET /__admin/ledger` (JSON array of ``StagingLedgerEntry``),
    /// `GET /__admin/counters` (``StagingCounters``), `GET|PUT /__admin/faults`
    /// (``StagingFaults``), `GET|PUT /__admin/limits` (``StagingLimits``), `POST /__admin/reset`,
    /// `GET /__admin/health`. Never rate limited, never faulted.
    func handleAdmin(_ route: Route.AdminRoute, _ context: RequestContext) -> HTTPResponse {
        switch route {
        case .ledger: return encoded(ledger(), context)
        case .counters: return encoded(counters(), context)
        case .getFaults: return encoded(currentFaults(), context)
        case .getLimits: return encoded(limiter.limits(), context)
        case .putFaults:
            switch decodeAdminBody(StagingFaults.self, context) {
            case .success(let faults):
                let problems = faults.problems()
                guard problems.isEmpty else { return adminProblems(problems, context) }
                setFaults(faults)
                return encoded(faults, context)
            case .failure(let refusal): return refusal.response
            }
        case .putLimits:
            switch decodeAdminBody(StagingLimits.self, context) {
            case .success(let limits):
                var check = configuration
                check.limits = limits
                let problems = check.problems()
                guard problems.isEmpty else { return adminProblems(problems, context) }
                setLimits(limits)
                return encoded(limits, context)
            case .failure(let refusal): return refusal.response
            }
        case .reset:
            reset()
            return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: Array(#"{"ok":true}"#.utf8))
        case .health:
            return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: Array(#"{"ok":true}"#.utf8))
        }
    }

    private func encoded<T: Encodable>(_ value: T, _ context: RequestContext) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(value) else {
            return errorResponse(500, "Internal server error", context)
        }
        return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: Array(data))
    }

    private func decodeAdminBody<T: Decodable>(_ type: T.Type, _ context: RequestContext) -> Result<T, Refusal> {
        do {
            return .success(try JSONDecoder().decode(T.self, from: Data(context.request.body)))
        } catch {
            let issue = ValidationIssue(field: "body", message: "body is not a valid \(T.self): \(error)")
            return .failure(Refusal(response: validationResponse([issue], context)))
        }
    }

    private func adminProblems(_ problems: [String], _ context: RequestContext) -> HTTPResponse {
        validationResponse(problems.map { ValidationIssue(field: "body", message: $0) }, context)
    }
}
