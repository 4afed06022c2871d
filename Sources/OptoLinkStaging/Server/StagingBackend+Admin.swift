import Foundation
import OptoLinkHTTP
import SoakSupport

extension StagingBackend {
    /// The admin routes: `GET /__admin/ledger[?since=SEQ&limit=N&until=EPOCH]` (JSON array of
    /// ``StagingLedgerEntry`` with `sequence > SEQ`, at most N; all by default; `after` is
    /// accepted for `since`; page a long run's ledger with `since` = the last sequence read; a
    /// value that is not a whole number ≥ 0 is a 400 naming it; `until` ends the page before the
    /// first entry that arrived after EPOCH, Unix seconds, so a run's ledger can be asked for up to
    /// the run's end and a page shorter than N says it is all there; not a number ≥ 0: a 400),
    /// `GET /__admin/counters` (``StagingCounters``), `GET|PUT /__admin/faults`
    /// (``StagingFaults``), `GET|PUT /__admin/limits` (``StagingLimits``), `POST /__admin/reset`,
    /// `GET /__admin/health`, `GET /__admin/peer` (`{"clientIP": …}`: the address the per-IP
    /// limits key this request on, the check `run --local-ips` makes). Never rate limited, never faulted.
    func handleAdmin(_ route: Route.AdminRoute, _ context: RequestContext) -> HTTPResponse {
        switch route {
        case .ledger:
            let query = context.request.query
            let sinceName = PercentDecoding.queryValue(query, "since") != nil ? "since" : "after"
            var issues: [ValidationIssue] = []
            func count(_ name: String, absent: Int) -> Int {
                guard let text = PercentDecoding.queryValue(query, name) else { return absent }
                guard let value = Int(text), value >= 0 else {
                    issues.append(ValidationIssue(field: name, message: "\(name) must be a whole number ≥ 0"))
                    return absent
                }
                return value
            }
            let since = count(sinceName, absent: 0)
            let limit = count("limit", absent: Int.max)
            var until = Double.infinity
            if let text = PercentDecoding.queryValue(query, "until") {
                if let value = Double(text), value.isFinite, value >= 0 {
                    until = value
                } else {
                    issues.append(ValidationIssue(field: "until", message: "until must be a Unix time in seconds ≥ 0"))
                }
            }
            guard issues.isEmpty else { return validationResponse(issues, context) }
            let page = ledger(since: since, limit: limit)
            return encoded(Array(page.prefix { $0.arrivedAt <= until }), context)
        case .counters: return encoded(counters(), context)
        case .getFaults: return encoded(currentFaults(), context)
        case .getLimits: return encoded(limiter.limits(), context)
        case .putFaults:
            return replace(StagingFaults.self, context, problems: { $0.problems() }, apply: setFaults)
        case .putLimits:
            return replace(
                StagingLimits.self, context,
                problems: { limits in
                    var check = configuration
                    check.limits = limits
                    return check.problems()
                }, apply: setLimits)
        case .reset:
            reset()
            return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: Array(#"{"ok":true}"#.utf8))
        case .health:
            return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: Array(#"{"ok":true}"#.utf8))
        case .peer:
            return encoded(["clientIP": context.ip], context)
        }
    }

    /// Decodes a `PUT` body, validates it (400 with each problem as a detail) and applies it;
    /// answers with what is now in force.
    private func replace<T: Codable>(
        _ type: T.Type, _ context: RequestContext, problems: (T) -> [String], apply: (T) -> Void
    ) -> HTTPResponse {
        switch decodeAdminBody(T.self, context) {
        case .success(let value):
            let found = problems(value)
            guard found.isEmpty else { return adminProblems(found, context) }
            apply(value)
            return encoded(value, context)
        case .failure(let refusal): return refusal.response
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
            let why = (error as? DecodingError)?.readableDescription ?? "\(error)"
            let issue = ValidationIssue(field: "body", message: "body is not a valid \(T.self): \(why)")
            return .failure(Refusal(response: validationResponse([issue], context)))
        }
    }

    private func adminProblems(_ problems: [String], _ context: RequestContext) -> HTTPResponse {
        validationResponse(problems.map { ValidationIssue(field: "body", message: $0) }, context)
    }
}
